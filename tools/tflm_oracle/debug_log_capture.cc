// Replaces TFLM's debug_log.cc: keeps the messages of the current trial so the
// probe can give the reason a model cannot run, and echoes to stderr only when asked
// (TFLM_ORACLE_VERBOSE=1), since bisection provokes many expected failures.
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tensorflow/lite/micro/debug_log.h"

namespace {
char messages[512];
}

extern "C" void DebugLog(const char* format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  if (std::getenv("TFLM_ORACLE_VERBOSE") != nullptr) {
    std::vfprintf(stderr, format, copy);
  }
  va_end(copy);
  char line[sizeof(messages)];
  std::vsnprintf(line, sizeof(line), format, args);
  // MicroPrintf sends its "\r\n" as a separate call; messages are joined
  // with "; " instead, so the reason stays on one line of JSON.
  if (line[0] == '\0' || line[0] == '\r' || line[0] == '\n') return;
  const size_t used = std::strlen(messages);
  std::snprintf(messages + used, sizeof(messages) - used, "%s%s",
                used == 0 ? "" : "; ", line);
}

extern "C" int DebugVsnprintf(char* buffer, size_t buf_size, const char* format,
                              va_list vlist) {
  return std::vsnprintf(buffer, buf_size, format, vlist);
}

const char* TrialMessages() { return messages; }
void ClearTrialMessages() { messages[0] = '\0'; }
