#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <string_view>
#include <system_error>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.h"
#include "cli/options.h"
#include "edgemem_version.h"  // written at every build by cmake/version.cmake
#include "ingest/printable_name.h"
#include "report/names.h"
#include "report/style.h"

int edgemem::cli::fail(const std::string& what, const std::string& why) { return fail(what + ": " + why); }

// An error quotes what it could not read (a line's words, a file's name):
// control bytes in it are shown escaped, so a hostile file cannot drive the
// terminal the error is printed on.
int edgemem::cli::fail(const std::string& error) {
  fmt::print(stderr, "edgemem: {}\n", edgemem::printable_name(error));
  return 2;
}

namespace {

// The position of the first word that is not an option (nor --color's
// value): the subcommand's name, or argc.
int command_word(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (!word.starts_with("-")) return i;
    if ((word == "--color" || word == "--colour") && i + 1 < argc) ++i;
  }
  return argc;
}

// The first word that is not an option must name a subcommand; CLI11 alone
// would answer a typo with "A subcommand is required".
std::string unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  const int at = command_word(argc, argv);
  if (at == argc || edgemem::names::match(argv[at], names)) return {};
  // "edgemem --fail-on leak analyze f": the option's value, not a command.
  const std::string_view before = argv[at - 1];
  if (at > 1 && before.starts_with("-") && before.find('=') == std::string_view::npos)
    for (int i = at + 1; i < argc; ++i)
      if (auto command = edgemem::names::match(argv[i], names))
        return fmt::format("{} comes before the command: options go after it (edgemem {} {} {} ...; see edgemem {} "
                           "--help)",
                           before, *command, before, argv[at], *command);
  return edgemem::names::unknown("command", argv[at], names) + "; run edgemem --help";
}

// CLI11 lists unexpected words last first; said in the order typed, with
// the command that does take a misplaced option (analyze --until is watch's).
// An option typed before the command is edgemem's own, which takes none
// but --color: "edgemem --json analyze f" once read "analyze does not take
// --json; --json is an option of demo, plan, ...".
std::string extras_message(const CLI::App& top, int argc, char** argv) {
  std::vector<CLI::App*> chosen = top.get_subcommands();
  const std::vector<std::string> extras = top.remaining(true);
  const int at = command_word(argc, argv);
  for (int i = 1; i < at; ++i)
    if (std::find(extras.begin(), extras.end(), argv[i]) != extras.end())
      return fmt::format("edgemem: {} comes before the command: options go after it ({}; see {})\n", argv[i],
                         at < argc ? fmt::format("edgemem {} {} ...", argv[at], argv[i]) : std::string("edgemem COMMAND ..."),
                         at < argc ? fmt::format("edgemem {} --help", argv[at]) : std::string("edgemem --help"));
  const std::string command = chosen.empty() ? "edgemem" : chosen.front()->get_name();
  std::string hint;
  for (const std::string& word : extras) {
    if (!word.starts_with("-") || chosen.empty()) continue;
    const std::string option = word.substr(0, word.find('='));
    std::vector<std::string> owners;
    for (const CLI::App* sub : top.get_subcommands([](const CLI::App*) { return true; }))
      if (sub != chosen.front() && sub->get_option_no_throw(option) != nullptr) owners.push_back(sub->get_name());
    if (!owners.empty()) {
      hint = fmt::format("; {} is an option of {}", option, fmt::join(owners, ", "));
      break;
    }
  }
  const std::string help = chosen.empty() ? "edgemem --help" : "edgemem " + command + " --help";
  return fmt::format("edgemem: {} does not take {}{} (see {})\n", command, fmt::join(extras, " "), hint, help);
}

// A pipe whose reader has gone (`| head`): Linux polls its write end as
// POLLERR. An export that met it was said where it failed; the exit code is
// still the shell's for a closed pipe, as for the report itself.
bool reader_gone(int fd) {
  pollfd p{fd, 0, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & POLLERR);
}

}  // namespace

int main(int argc, char** argv) {
  // Started with stdin, stdout or stderr closed: hold the number with
  // /dev/null, closed again on exec, so no file edgemem opens lands there
  // (to be read as the recorded program's stdin, or written by a stray
  // print) and a program it runs finds it closed, as it would without edgemem.
  for (int fd = 0; fd <= 2; ++fd)
    if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR | O_CLOEXEC) != fd) break;
  // A reader that closes the pipe early (| head) makes writes fail; the
  // write error is caught below instead of the signal ending the process.
  std::signal(SIGPIPE, SIG_IGN);
  // Past `ulimit -f` a write fails with EFBIG ("File too large") and is
  // said as any failed write, instead of the signal ending the process with
  // no report and an export's temporary left behind.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"edgemem: memory of on-device inference, made visible"};
  app.set_version_flag("--version", "edgemem " EDGEMEM_VERSION);
  app.ignore_case();  // subcommands and options, in any case
  app.fallthrough();  // --color may come after the subcommand
  app.require_subcommand(1);
  app.failure_message([argc, argv](const CLI::App* top, const CLI::Error& e) {
    if (dynamic_cast<const CLI::ExtrasError*>(&e)) return extras_message(*top, argc, argv);
    return fmt::format("edgemem: {} (see --help)\n", e.what());
  });
  std::string colour = "auto";
  edgemem::cli::add_name_option(app, "--color,--colour", colour,
                                "Colour the verdicts: auto (a terminal, NO_COLOR unset) | always | never", "--color value",
                                {"auto", "always", "never"});
  app.parse_complete_callback([&colour] {
    edgemem::style::set_colour(colour == "always"  ? edgemem::style::When::always
                               : colour == "never" ? edgemem::style::When::never
                                                   : edgemem::style::When::automatic);
  });
  edgemem::cli::exit_code_help(app, "a verdict against you: a leak or overflow under --fail-on, a broken budget, a model that "
                               "does not fit, a short declared arena, a map that disagrees with its ELF",
                               "edgemem check --budget budget.json || echo 'over budget'   (each command's --help has its own)");
  edgemem::cli::add_analyze_command(app);
  edgemem::cli::add_demo_command(app);
  edgemem::cli::add_plan_command(app);
  edgemem::cli::add_map_command(app);
  edgemem::cli::add_stack_command(app);
  edgemem::cli::add_fit_command(app);
  edgemem::cli::add_check_command(app);
  edgemem::cli::add_diff_command(app);
  edgemem::cli::add_watch_command(app);
  edgemem::cli::add_record_command(app);
  std::string typo = unknown_subcommand(app, argc, argv);
  if (!typo.empty()) {
    fmt::print(stderr, "edgemem: {}\n", typo);
    return 2;
  }
  int rc = 0;
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    rc = e.get_exit_code();
  } catch (const CLI::ParseError& e) {
    // Usage errors exit 2 as the rest of edgemem's bad input does.
    rc = app.exit(e) == 0 ? 0 : 2;
  } catch (const std::system_error& e) {
    if (e.code() == std::errc::broken_pipe) return 128 + SIGPIPE;  // what the shell reports for | head
    // A print to a full disk (stdout on /dev/full) throws from fmt, which
    // calls every stream "file".
    if (std::ferror(stdout)) {
      fmt::print(stderr, "edgemem: cannot write the report to stdout: {}\n", e.code().message());
      return 2;
    }
    return edgemem::cli::fail(e.what());
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "edgemem: out of memory: the input is larger than this machine can hold (a device file such "
                       "as /dev/zero, or a file that is not what the command reads)\n");
    return 2;
  } catch (const std::exception& e) {
    return edgemem::cli::fail(e.what());
  }
  // The report on stdout is the answer: a full disk or a closed pipe must not pass as success.
  // A write that failed before (an export sent to stdout) was said where it
  // failed; errno is now of whatever ran since, so only this flush's own failure is said.
  const bool failed_before = std::ferror(stdout) != 0;
  errno = 0;
  if (std::fflush(stdout) != 0 || failed_before) {
    if (errno == EPIPE || (failed_before && reader_gone(STDOUT_FILENO))) return 128 + SIGPIPE;
    if (!failed_before)
      fmt::print(stderr, "edgemem: cannot write the report to stdout: {}\n", std::strerror(errno ? errno : EIO));
    return 2;
  }
  return rc;
}
