// Stand-in for ruy's profiler header, which TFLM's reference kernels include
// only to mark scopes; the oracle measures memory, not time, so the label is
// a no-op and ruy itself is not needed.
#ifndef EDGEMEM_TFLM_ORACLE_RUY_PROFILER_INSTRUMENTATION_H_
#define EDGEMEM_TFLM_ORACLE_RUY_PROFILER_INSTRUMENTATION_H_

namespace ruy {
namespace profiler {

class ScopeLabel {
 public:
  template <typename... Args>
  explicit ScopeLabel(Args&&...) {}
};

}  // namespace profiler
}  // namespace ruy

#endif  // EDGEMEM_TFLM_ORACLE_RUY_PROFILER_INSTRUMENTATION_H_
