#include "cli/options.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "report/names.h"
#include "report/units.h"

namespace edgemem::cli {

CLI::Option* add_size_option(CLI::App& cmd, const std::string& name, uint64_t& value, const std::string& help) {
  return cmd
      .add_option_function<std::string>(
          name,
          [&value, name](const std::string& text) {
            std::string error;
            auto size = units::parse_size(text, error);
            if (!size) throw CLI::ValidationError(name, error);
            value = *size;
          },
          help + " (bytes: 65536, 0x10000, 64K, 1M)")
      ->type_name("SIZE");
}

CLI::Option* add_name_option(CLI::App& cmd, const std::string& name, std::string& value, const std::string& help,
                             const std::string& kind, std::vector<std::string> known) {
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : "|") + k;
  CLI::Validator one_of(
      [known, kind](std::string& text) {
        if (auto m = names::match(text, known)) {
          text = *m;
          return std::string();
        }
        return names::unknown(kind, text, known);
      },
      list);
  return cmd.add_option(name, value, help)->transform(one_of)->capture_default_str();
}

namespace {

// Digits only, up to 19 of them (under 2^63): CLI11 reads "-1" into an unsigned option as 2^64 - 1.
CLI::Option* whole_number_from(CLI::Option* option, bool zero) {
  return option->check(CLI::Validator(
      [zero](std::string& text) -> std::string {
        if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos ||
            (!zero && text.find_first_not_of('0') == std::string::npos))
          return fmt::format("expected a whole number from {}, got {}", zero ? 0 : 1, text);
        return {};
      },
      zero ? "N>=0" : "N>=1"));
}

}  // namespace

CLI::Option* whole_number_from_one(CLI::Option* option) { return whole_number_from(option, false); }
CLI::Option* whole_number(CLI::Option* option) { return whole_number_from(option, true); }

CLI::Option* file_name(CLI::Option* option) {
  return option->check(CLI::Validator(
      [](std::string& text) -> std::string { return text.empty() ? "expected a file name, got an empty one" : ""; },
      "FILE"));
}

void exit_code_help(CLI::App& cmd, const std::string& finding, const std::string& example, const std::string& more) {
  cmd.footer(fmt::format("Exit codes:\n  0  nothing against you\n  1  {}\n  2  bad usage or input it cannot read\n{}"
                         "Example:\n  {}",
                         finding, more, example));
}

}  // namespace edgemem::cli
