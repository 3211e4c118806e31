#include "static/demangle.h"

#include <cxxabi.h>

#include <cstdlib>

namespace edgemem {

std::string demangle(const std::string& name) {
  if (!name.starts_with("_Z")) return name;
  int status = 0;
  char* text = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string out = status == 0 && text ? text : name;
  std::free(text);
  return out;
}

}  // namespace edgemem
