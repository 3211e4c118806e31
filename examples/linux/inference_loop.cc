// An allocation-heavy inference loop, the shape of an ONNX Runtime / NCNN /
// llama.cpp process on an edge gateway: each "inference" allocates and
// frees tensors of 64 B to 256 KiB. With --leak it also keeps one 128-byte
// tensor descriptor per inference, the leak that gets such processes
// OOM-killed after days (seed 004).
//
//   g++ -O2 -g -fno-omit-frame-pointer -pthread inference_loop.cc -o inference_loop
//   edgemem record -o run.emt -- ./inference_loop --inferences 200 --leak
//   edgemem analyze run.emt
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "edgemem_marker.h"

namespace {

struct Options {
  int inferences = 100;
  int threads = 1;
  bool leak = false;
  bool markers = true;
  int pace_ms = 0;  // sleep between inferences, as a camera-paced pipeline (and to attach to it)
};

struct TensorDescriptor {
  uint32_t shape[8];
  uint64_t strides[8];
  uint64_t bytes;
  void* data;
  char name[16];
};
static_assert(sizeof(TensorDescriptor) == 128, "the planted leak is 128 B per inference");

// The planted leak: one descriptor per inference that nothing frees.
__attribute__((noinline)) void describe_output(uint64_t bytes, void* data) {
  auto* d = static_cast<TensorDescriptor*>(std::malloc(sizeof(TensorDescriptor)));  // edgemem-example: leak
  std::memset(d, 0, sizeof *d);
  d->bytes = bytes;
  d->data = data;
  // Kept where the optimiser cannot prove it dead (as a real runtime's registry).
  static std::atomic<TensorDescriptor*> last{nullptr};
  last.store(d, std::memory_order_relaxed);
}

// Sizes 64 B .. 256 KiB, a fixed pseudo-random sequence so runs compare.
size_t tensor_size(uint32_t& state) {
  state = state * 1664525u + 1013904223u;
  unsigned shift = 6 + (state >> 28) % 13;  // 64 B .. 256 KiB
  return size_t{1} << shift;
}

__attribute__((noinline)) float run_inference(int index, uint32_t& state, bool leak) {
  std::vector<std::unique_ptr<float[]>> activations;
  float sum = 0;
  for (int t = 0; t < 32; ++t) {
    size_t bytes = tensor_size(state);
    std::unique_ptr<float[]> a(new float[bytes / sizeof(float)]);
    a[0] = static_cast<float>(index + t);
    sum += a[0];
    activations.push_back(std::move(a));
  }
  if (leak) describe_output(activations.size(), activations.back().get());
  return sum;
}

void worker(const Options& o, int id, float* out) {
  uint32_t state = 12345u + static_cast<uint32_t>(id);
  float total = 0;
  for (int i = 0; i < o.inferences; ++i) {
    if (o.markers && id == 0) edgemem_mark_inference_begin(static_cast<uint64_t>(i + 1));
    total += run_inference(i, state, o.leak);
    if (o.markers && id == 0) edgemem_mark_inference_end(static_cast<uint64_t>(i + 1));
    if (o.pace_ms) std::this_thread::sleep_for(std::chrono::milliseconds(o.pace_ms));
  }
  *out = total;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--leak")) o.leak = true;
    else if (!std::strcmp(argv[i], "--no-markers")) o.markers = false;
    else if (!std::strcmp(argv[i], "--inferences") && i + 1 < argc) o.inferences = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc) o.threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--pace-ms") && i + 1 < argc) o.pace_ms = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--inferences N] [--threads 1|2] [--leak] [--no-markers] [--pace-ms MS]\n", argv[0]);
      return 2;
    }
  }
  if (o.threads < 1 || o.threads > 2 || o.inferences < 0) {
    std::fprintf(stderr, "inference_loop: --threads is 1 or 2 and --inferences at least 0\n");
    return 2;
  }
  std::vector<float> results(static_cast<size_t>(o.threads));
  std::vector<std::thread> pool;
  for (int t = 1; t < o.threads; ++t) pool.emplace_back(worker, std::cref(o), t, &results[static_cast<size_t>(t)]);
  worker(o, 0, &results[0]);
  for (auto& t : pool) t.join();
  std::printf("inference_loop: %d inferences x %d threads, checksum %.0f\n", o.inferences, o.threads,
              static_cast<double>(results[0]));
  return 0;
}
