// Where `watch` shows its status: on a terminal one line rewritten in place
// (cut to the terminal's width, since a wrapped line cannot be rewritten),
// otherwise one line per status, for a log file or CI output. Both on stderr,
// so stdout holds only the final summary (or its JSON).
#pragma once

#include <string>

namespace edgemem::cli {

class StatusDisplay {
 public:
  StatusDisplay();
  ~StatusDisplay();
  void status(const std::string& line);
  // A line that must stay (an alert, a note): printed above the status.
  void message(const std::string& line);
  void clear();

 private:
  bool tty_;
  bool shown_ = false;
};

}  // namespace edgemem::cli
