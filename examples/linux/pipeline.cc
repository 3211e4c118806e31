// A multi-threaded inference pipeline with three planted leaks, the shapes
// seed 004's gateways die of. A preprocessing thread turns frames into
// input tensors and hands them over a queue; the main thread runs the
// "model" on each and marks each inference.
//  * preprocess_frame keeps a copy of every frame's input (3,072 B a frame),
//    on the preprocessing thread, which marks no inference;
//  * describe_tensor keeps a 128 B tensor descriptor every Nth frame;
//  * append_history grows one history buffer by realloc every frame and
//    never frees it (one block whose size climbs: 16 B a frame).
// Not leaks: the main thread frees each input the preprocessing thread made
// (a cross-thread free), and run_model's activations are freed right after
// they were made (a temporary allocation).
// --pace-ms N waits N ms before each frame, as a camera would make the
// preprocessing thread wait: long enough a run to attach to. A recorder
// attached during the run binds the inference markers; the pipeline then
// says how many frames it preprocessed after that (their copies are the
// leak a recording from the attach on can see).
//
//   edgemem record -o pipeline.emt -- ./pipeline --frames 64 --every 4
//   edgemem analyze pipeline.emt
//   ./pipeline --frames 400 --pace-ms 20 & edgemem record --pid $! -o attached.emt
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <chrono>
#include <mutex>
#include <thread>

#include "edgemem_marker.h"

namespace {

constexpr size_t kFrameBytes = 3 * 32 * 32;  // one 32x32 RGB frame, 8-bit

struct TensorDescriptor {
  uint32_t shape[8];
  uint64_t strides[8];
  uint64_t bytes;
  void* data;
  char name[16];
};
static_assert(sizeof(TensorDescriptor) == 128, "the planted descriptor leak is 128 B");

struct Queue {
  std::mutex m;
  std::condition_variable ready;
  std::deque<unsigned char*> frames;
  bool done = false;
  int preprocessed_recorded = 0;  // frames preprocessed with edgemem's recorder loaded
};

// Kept where the optimiser cannot prove the leaked blocks dead.
void* volatile g_kept;

__attribute__((noinline)) unsigned char* preprocess_frame(int frame) {
  auto* input = static_cast<unsigned char*>(std::malloc(kFrameBytes));
  std::memset(input, frame & 0xFF, kFrameBytes);
  auto* copy = static_cast<unsigned char*>(std::malloc(kFrameBytes));  // pipeline-leak: preprocessing buffer
  std::memcpy(copy, input, kFrameBytes);
  g_kept = copy;
  return input;
}

__attribute__((noinline)) void describe_tensor(const unsigned char* data) {
  auto* d = static_cast<TensorDescriptor*>(std::calloc(1, sizeof(TensorDescriptor)));  // pipeline-leak: tensor descriptor
  d->bytes = kFrameBytes;
  d->data = const_cast<unsigned char*>(data);
  g_kept = d;
}

__attribute__((noinline)) void append_history(char*& history, int frame) {
  history = static_cast<char*>(std::realloc(history, static_cast<size_t>(frame + 1) * 16));  // pipeline-leak: realloc chain
  std::memset(history + frame * 16, 0, 16);
  std::memcpy(history + frame * 16, &frame, sizeof frame);
}

__attribute__((noinline)) float run_model(const unsigned char* input) {
  auto* activations = static_cast<float*>(std::malloc(kFrameBytes * sizeof(float)));  // pipeline-temporary: activations
  float sum = 0;
  for (size_t i = 0; i < kFrameBytes; ++i) sum += activations[i] = static_cast<float>(input[i]) / 255.0f;
  std::free(activations);
  return sum;
}

// edgemem's recorder is in the process: it defines the markers (bound at
// start-up, or by an attach, after the allocation functions). Asked anew
// each frame: the compiler takes a symbol's address for a constant and
// would test it once before the loop.
#if defined(__clang__)
__attribute__((noinline))  // clang has no noipa
#else
__attribute__((noipa))
#endif
bool recorder_loaded() { return edgemem_inference_begin != nullptr; }

void preprocess_loop(Queue& q, int frames, int pace_ms) {
  for (int f = 0; f < frames; ++f) {
    if (pace_ms) std::this_thread::sleep_for(std::chrono::milliseconds(pace_ms));
    q.preprocessed_recorded += recorder_loaded();
    unsigned char* input = preprocess_frame(f);
    std::lock_guard lock(q.m);
    q.frames.push_back(input);
    q.ready.notify_one();
  }
  std::lock_guard lock(q.m);
  q.done = true;
  q.ready.notify_one();
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 64, every = 4, pace_ms = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--frames") && i + 1 < argc) frames = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--every") && i + 1 < argc) every = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--pace-ms") && i + 1 < argc) pace_ms = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--frames N] [--every N] [--pace-ms MS]\n", argv[0]);
      return 2;
    }
  }
  if (frames < 0 || every < 1 || pace_ms < 0) {
    std::fprintf(stderr, "pipeline: --frames and --pace-ms are at least 0 and --every at least 1\n");
    return 2;
  }
  Queue q;
  std::thread preprocessing(preprocess_loop, std::ref(q), frames, pace_ms);
  char* history = nullptr;
  float total = 0;
  for (int f = 0;; ++f) {
    unsigned char* input;
    {
      std::unique_lock lock(q.m);
      q.ready.wait(lock, [&] { return !q.frames.empty() || q.done; });
      if (q.frames.empty()) break;
      input = q.frames.front();
      q.frames.pop_front();
    }
    edgemem_mark_inference_begin(static_cast<uint64_t>(f + 1));
    total += run_model(input);
    if ((f + 1) % every == 0) describe_tensor(input);
    append_history(history, f);
    edgemem_mark_inference_end(static_cast<uint64_t>(f + 1));
    std::free(input);
  }
  preprocessing.join();
  std::printf("pipeline: %d frames, a descriptor every %d, checksum %.0f\n", frames, every, static_cast<double>(total));
  if (q.preprocessed_recorded > 0 && q.preprocessed_recorded < frames)
    std::printf("pipeline: a recorder attached during the run: %d frames preprocessed after it\n", q.preprocessed_recorded);
  return 0;
}
