// How often `watch` would raise a false leak alert, and how late a real one:
// the leak rule (analysis/leak_trend.h) fed generated usage at inference
// ends. Each working set runs RUNS times (seeds 1000..) for INFERENCES
// inferences with no leak ("false alerts": runs that raised one, and of them
// those after inference 10,000, past any warm-up); then 10 times with a
// 644 B per inference leak from inference 20,001, and 10 times with a 64 B
// one: inferences from the leak's start to its confirmation (see latency()).
//   leak_trend_sim [RUNS] [INFERENCES]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "analysis/leak_trend.h"

namespace {

using Random = std::mt19937_64;

struct WorkingSet {
  virtual ~WorkingSet() = default;
  virtual uint64_t next(Random& random) = 0;  // usage at the next inference end
};

// `slots` slots; each inference fills or frees `moves` of them at random,
// with sizes drawn by `size`: usage is a bounded random walk.
struct Slots : WorkingSet {
  std::vector<uint64_t> slot;
  int moves;
  std::function<uint64_t(Random&)> size;
  uint64_t used = 0;
  Slots(int slots, int m, std::function<uint64_t(Random&)> s, bool half_full, Random& random)
      : slot(static_cast<size_t>(slots)), moves(m), size(std::move(s)) {
    if (half_full)
      for (auto& b : slot)
        if (random() % 2) used += b = size(random);
  }
  uint64_t next(Random& random) override {
    for (int i = 0; i < moves; ++i) {
      uint64_t& b = slot[random() % slot.size()];
      if (b) {
        used -= b;
        b = 0;
      } else {
        used += b = size(random);
      }
    }
    return used;
  }
};

// One slot of 256 filled or freed every tenth inference.
struct SlowSlots : Slots {
  SlowSlots(Random& random) : Slots(256, 1, [](Random&) { return 1024; }, true, random) {}
  uint64_t next(Random& random) override { return random() % 10 == 0 ? Slots::next(random) : used; }
};

// tests/watch/soak_trace.h's heap: 0-4 buffers of 800-3,200 B held across inference ends.
struct Temporaries : WorkingSet {
  uint64_t held[4] = {};
  uint64_t next(Random& random) override {
    uint64_t& b = held[random() % 4];
    if (b) b = 0;
    else if (random() % 2) b = 800 + random() % 2401;
    return 24576 + held[0] + held[1] + held[2] + held[3];
  }
};

double uniform(Random& random) { return static_cast<double>(random() >> 11) * 0x1.0p-53; }
uint64_t pareto(Random& random, double scale, double alpha) {
  return static_cast<uint64_t>(std::min(scale / std::pow(1 - uniform(random), 1 / alpha), 4194304.0));
}

struct HeavyTemporaries : WorkingSet {
  uint64_t next(Random& random) override { return 24576 + pareto(random, 200, 1.2); }
};

// An arena whose top is 56 KB higher at about half the inference ends.
struct ArenaTop : WorkingSet {
  uint64_t next(Random& random) override { return 100000 + (random() % 2) * 56000 + random() % 512; }
};

// 20 KB taken over the first 100 inferences, then flat.
struct WarmUp : WorkingSet {
  uint64_t i = 0;
  uint64_t next(Random&) override { return 50000 + std::min<uint64_t>(++i, 100) * 200; }
};

struct Case {
  const char* name;
  std::function<std::unique_ptr<WorkingSet>(Random&)> make;
};

auto fixed(uint64_t bytes) {
  return [bytes](Random&) { return bytes; };
}
auto between(uint64_t low, uint64_t high) {
  return [low, high](Random& random) { return low + random() % (high - low + 1); };
}

// The inference at which the rule first confirms a leak of `leak` B per
// inference from `leak_from` on, or 0; `before` tells whether it had already
// confirmed one before the leak began (watch raises one alert per pool).
uint64_t first_alert(WorkingSet& set, Random& random, uint64_t inferences, uint64_t leak_from, uint64_t leak,
                     bool* before = nullptr) {
  edgemem::LeakTrend trend;
  uint64_t leaked = 0;
  for (uint64_t i = 1; i <= inferences; ++i) {
    const uint64_t used = set.next(random);
    if (i >= leak_from) leaked += leak;
    trend.add(used + leaked);
    if (auto e = trend.estimate(); e && e->confirmed) {
      if (i >= leak_from) return i;
      if (!before) return i;
      *before = true;
    }
  }
  return 0;
}

// "min-max" inferences from a leak's start to its confirmation over 10 runs,
// "+N never" for runs without one within `within`, "*N" for runs that had
// raised a false alert before it.
std::string latency(const Case& c, uint64_t leak, uint64_t within) {
  uint64_t low = UINT64_MAX, high = 0;
  int never = 0, early = 0;
  for (int run = 0; run < 10; ++run) {
    Random random(1000 + static_cast<uint64_t>(run));
    auto set = c.make(random);
    bool before = false;
    const uint64_t at = first_alert(*set, random, 20000 + within, 20001, leak, &before);
    early += before;
    if (at == 0) {
      ++never;
      continue;
    }
    low = std::min(low, at - 20001);
    high = std::max(high, at - 20001);
  }
  std::string out = low == UINT64_MAX ? "never" : std::to_string(low) + "-" + std::to_string(high);
  if (never && low != UINT64_MAX) out += " +" + std::to_string(never) + " never";
  if (early) out += " *" + std::to_string(early);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::atoi(argv[1]) : 40;
  const uint64_t inferences = argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 100000;
  const std::vector<Case> cases = {
      {"256 slots, 9 moves, 16-1024 B, from empty",
       [](Random& r) { return std::make_unique<Slots>(256, 9, between(16, 1024), false, r); }},
      {"256 slots, 9 moves, 16-1024 B", [](Random& r) { return std::make_unique<Slots>(256, 9, between(16, 1024), true, r); }},
      {"256 slots, 1 move, 1 KiB, from empty",
       [](Random& r) { return std::make_unique<Slots>(256, 1, fixed(1024), false, r); }},
      {"256 slots, 1 move, 1 KiB", [](Random& r) { return std::make_unique<Slots>(256, 1, fixed(1024), true, r); }},
      {"256 slots, 1 move, 64 B", [](Random& r) { return std::make_unique<Slots>(256, 1, fixed(64), true, r); }},
      {"1024 slots, 3 moves, 16-512 B", [](Random& r) { return std::make_unique<Slots>(1024, 3, between(16, 512), true, r); }},
      {"64 slots, 1 move, 256 B", [](Random& r) { return std::make_unique<Slots>(64, 1, fixed(256), true, r); }},
      {"256 slots, a move every 10th", [](Random& r) { return std::make_unique<SlowSlots>(r); }},
      {"256 slots, 3 moves, Pareto sizes",
       [](Random& r) {
         return std::make_unique<Slots>(256, 3, [](Random& q) { return 64 + pareto(q, 64, 1.1); }, false, r);
       }},
      {"soak_trace.h temporaries", [](Random&) { return std::make_unique<Temporaries>(); }},
      {"Pareto temporaries", [](Random&) { return std::make_unique<HeavyTemporaries>(); }},
      {"arena top swinging 56 KB", [](Random&) { return std::make_unique<ArenaTop>(); }},
      {"20 KB warm-up", [](Random&) { return std::make_unique<WarmUp>(); }},
  };
  std::printf("%-42s %15s %9s  %-22s %s\n", "working set", "false alerts", "after 10k", "644 B/inference leak",
              "64 B/inference leak");
  for (const Case& c : cases) {
    int alerted = 0, late = 0;
    for (int run = 0; run < runs; ++run) {
      Random random(1000 + static_cast<uint64_t>(run));
      auto set = c.make(random);
      const uint64_t at = first_alert(*set, random, inferences, UINT64_MAX, 0);
      alerted += at > 0;
      late += at > 10000;
    }
    std::printf("%-42s %9d of %-3d %9d  %-22s %s\n", c.name, alerted, runs, late, latency(c, 644, 1000).c_str(),
                latency(c, 64, 20000).c_str());
  }
}
