// The option kinds every subcommand shares, so each is read the one way:
// sizes (64K, 1M, 0x10000, decimal; > 0), names from a fixed list (any case,
// did-you-mean on a miss), and the exit-code rule in every --help.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace edgemem::cli {

CLI::Option* add_size_option(CLI::App& cmd, const std::string& name, uint64_t& value, const std::string& help);

// Accepts any case and stores the listed spelling; a miss names the nearest.
CLI::Option* add_name_option(CLI::App& cmd, const std::string& name, std::string& value, const std::string& help,
                             const std::string& kind, std::vector<std::string> known);

// Accepts a whole number from 1 (a count, a process id): 0 and negative
// numbers are refused with one plain line, not a range of doubles.
CLI::Option* whole_number_from_one(CLI::Option* option);
// The same from 0.
CLI::Option* whole_number(CLI::Option* option);

// A file or directory name: an empty one (`--html ""`, an unset shell
// variable) is refused, not taken for the option left out.
CLI::Option* file_name(CLI::Option* option);

// "Exit codes: 0 ..., 1 `finding`, 2 ..." and an example, after the options.
// `more`: further exit codes, one "  N  meaning\n" line each.
void exit_code_help(CLI::App& cmd, const std::string& finding, const std::string& example, const std::string& more = "");

}  // namespace edgemem::cli
