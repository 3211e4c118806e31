// Colour for verdicts on a terminal. Decided once by the command line
// (--color=auto|always|never; auto: stdout is a terminal and NO_COLOR is
// unset) and read by every text presenter, so pipes and files stay plain.
#pragma once

#include <string>
#include <string_view>

namespace edgemem::style {

enum class When { automatic, always, never };

void set_colour(When when);

std::string good(std::string_view text);  // green: fits, holds
std::string bad(std::string_view text);   // red: short, broken, mismatch
std::string warn(std::string_view text);  // yellow: incomplete, unbounded
std::string strong(std::string_view text);

// No colour while it lives: for text that goes into a file or a page.
class Plain {
 public:
  Plain();
  ~Plain();
  Plain(const Plain&) = delete;
  Plain& operator=(const Plain&) = delete;

 private:
  bool was_;
};

}  // namespace edgemem::style
