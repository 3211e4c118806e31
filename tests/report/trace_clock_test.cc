// The clock the exports convert cycles with, as the viewers' description
// names it: in the unit that fits ("0.001 MHz" was a 1 kHz clock).
#include <gtest/gtest.h>

#include "report/trace_clock.h"

namespace edgemem {
namespace {

std::string described(double hz) {
  AnalysisResult r;
  r.clock_hz = hz;
  return TraceClock({"t", "emt", {}, TimeBase::cycles}, r).description();
}

TEST(TraceClock, NamesTheClockInTheUnitThatFitsIt) {
  EXPECT_EQ(described(80e6), "time in ns, from cycles at 80 MHz");
  EXPECT_EQ(described(32768), "time in ns, from cycles at 32.768 kHz");
  EXPECT_EQ(described(1000), "time in ns, from cycles at 1 kHz");
  EXPECT_EQ(described(50), "time in ns, from cycles at 50 Hz");
  AnalysisResult none;
  EXPECT_EQ(TraceClock({"t", "emt", {}, TimeBase::cycles}, none).ns(1234), 1234u);
  EXPECT_EQ(TraceClock({"t", "emt", {}, TimeBase::cycles}, [] { AnalysisResult r; r.clock_hz = 1000; return r; }()).ns(3),
            3'000'000u);
  // Perfetto reads timestamps as int64: 1e10 cycles at 1 Hz is 1e19 ns, past 2^63.
  auto slow = [] { AnalysisResult r; r.clock_hz = 1; return r; }();
  EXPECT_EQ(TraceClock({"t", "emt", {}, TimeBase::cycles}, slow).ns(10'000'000'000u), uint64_t{INT64_MAX});
  EXPECT_EQ(TraceClock({"t", "emt", {}, TimeBase::cycles}, none).ns(UINT64_MAX), uint64_t{INT64_MAX});
  // A trace that reaches past it says so: its last events meet at one instant.
  EXPECT_EQ(TraceClock({"t", "emt", {}, TimeBase::cycles}, slow).description(), "time in ns, from cycles at 1 Hz");
  slow.layout.end_time = 10'000'000'000u;
  EXPECT_EQ(TraceClock({"t", "emt", {}, TimeBase::cycles}, slow).description(),
            "time in ns, from cycles at 1 Hz; times past 2^63 - 1 ns (292 years) are held there, where the events after "
            "it meet");
}

}  // namespace
}  // namespace edgemem
