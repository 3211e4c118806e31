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

CLI::Option* whole_number_from_one(CLI::Option* option) {
  return option->check(CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos ||
            text.find_first_not_of('0') == std::string::npos)
          return "expected a whole number from 1, got " + text;
        return {};
      },
      "N>=1"));
}

void exit_code_help(CLI::App& cmd, const std::string& finding, const std::string& example, const std::string& more) {
  cmd.footer(fmt::format("Exit codes:\n  0  nothing against you\n  1  {}\n  2  bad usage or input it cannot read\n{}"
                         "Example:\n  {}",
                         finding, more, example));
}

}  // namespace edgemem::cli
