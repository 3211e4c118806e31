// TFLite's operator vocabulary as data: every BuiltinOperator name by its
// code, and which operators TFLite Micro has a kernel for. A model that uses
// anything else cannot run under TFLite Micro, whatever its arena.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "plan/tflite_model.h"

namespace edgemem::plan {

// "GATHER" for 36, "WHILE" for 119 (schema.fbs); empty for a code the
// schema does not name.
std::string_view builtin_operator_name(int32_t code);

// True when TFLite Micro's MicroMutableOpResolver can register a kernel
// for the operator: a builtin it implements, or a custom operator it ships
// ("ethos-u", "TFLite_Detection_PostProcess", the signal library).
bool tflm_has_kernel(const TfliteOp& op);

// What keeps a model from running under TFLite Micro, one entry per reason
// ("FlexAddV2 (TensorFlow op, needs the Flex delegate)", "TILE (no TFLite
// Micro kernel)", "VARIANT tensors"); empty when nothing does.
std::vector<std::string> tflm_blockers(const TfliteModel& model);

}  // namespace edgemem::plan
