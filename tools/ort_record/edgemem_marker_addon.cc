// A Node-API addon that gives JavaScript the inference markers of
// examples/linux/edgemem_marker.h, so `edgemem record -- node ...` can report
// growth per inference of a runtime driven from JavaScript. The markers are
// weak references: node dlopens this addon after the preload library is
// loaded, and the dynamic linker binds them to the recorder's definitions
// (or leaves them null, and the calls do nothing, without it).
#include <node_api.h>

#include <cstdint>

#include "edgemem_marker.h"

namespace {

// Reads argument 0 as the inference index; a bad call throws in JavaScript
// rather than recording a wrong boundary.
bool inference_index(napi_env env, napi_callback_info info, uint64_t* index) {
  size_t argc = 1;
  napi_value argv[1];
  if (napi_get_cb_info(env, info, &argc, argv, nullptr, nullptr) != napi_ok || argc != 1) {
    napi_throw_type_error(env, nullptr, "expected one argument: the inference index");
    return false;
  }
  int64_t value = 0;
  if (napi_get_value_int64(env, argv[0], &value) != napi_ok || value < 0) {
    napi_throw_type_error(env, nullptr, "the inference index must be a non-negative number");
    return false;
  }
  *index = static_cast<uint64_t>(value);
  return true;
}

napi_value begin(napi_env env, napi_callback_info info) {
  uint64_t index = 0;
  if (inference_index(env, info, &index)) edgemem_mark_inference_begin(index);
  return nullptr;
}

napi_value end(napi_env env, napi_callback_info info) {
  uint64_t index = 0;
  if (inference_index(env, info, &index)) edgemem_mark_inference_end(index);
  return nullptr;
}

// Tells the script whether the recorder is there, so a run that was meant to
// be recorded but is not says so instead of writing an unmarked recording.
napi_value recording(napi_env env, napi_callback_info) {
  napi_value result = nullptr;
  napi_get_boolean(env, edgemem_inference_begin != nullptr, &result);
  return result;
}

napi_value init(napi_env env, napi_value exports) {
  const napi_property_descriptor properties[] = {
      {"begin", nullptr, begin, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"end", nullptr, end, nullptr, nullptr, nullptr, napi_default, nullptr},
      {"recording", nullptr, recording, nullptr, nullptr, nullptr, napi_default, nullptr},
  };
  napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties);
  return exports;
}

}  // namespace

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
