#include "report/style.h"

#include <unistd.h>

#include <cstdlib>

namespace edgemem::style {
namespace {

bool enabled = false;

std::string paint(std::string_view code, std::string_view text) {
  if (!enabled) return std::string(text);
  return "\x1b[" + std::string(code) + "m" + std::string(text) + "\x1b[0m";
}

}  // namespace

void set_colour(When when) {
  const char* no_colour = std::getenv("NO_COLOR");
  enabled = when == When::always ||
            (when == When::automatic && ::isatty(STDOUT_FILENO) && !(no_colour && *no_colour));
}

Plain::Plain() : was_(enabled) { enabled = false; }
Plain::~Plain() { enabled = was_; }

std::string good(std::string_view text) { return paint("32", text); }
std::string bad(std::string_view text) { return paint("1;31", text); }
std::string warn(std::string_view text) { return paint("33", text); }
std::string strong(std::string_view text) { return paint("1", text); }

}  // namespace edgemem::style
