// RecordIO and image pipeline throughput. Makes its own data in a temporary
// folder (removed at the end), then measures:
//   1. the raw record reader against plain sequential reads of the same file
//      (the page-cache limit), sequentially and through the .idx;
//   2. decode + random crop 224 + mirror + normalize of 256x256 JPEGs, in
//      images per second on one thread (and decode alone, for the split);
//   3. ImageRecordIter end to end (batches of 64 float32 NCHW) with 1..T
//      preprocess threads.
//   bench_recordio [--dir DIR] [--records N] [--record-kb K] [--images M]
//                  [--threads T] [--repeats R]
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <functional>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <string>
#include <vector>

#include "base/threads.h"
#include "io/image_augmenter.h"
#include "io/image_record_iter.h"
#include "io/random.h"
#include "recordio/image_record.h"
#include "recordio/indexed_reader.h"
#include "recordio/indexed_writer.h"
#include "recordio/reader.h"

using namespace mx;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string dir;
  int records = 2000;
  int record_kb = 100;
  int images = 400;
  int threads = 0;
  int repeats = 3;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU seconds used by the whole process (all its threads) so far.
double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

struct Timing {
  double wall = 1e30;  // best wall-clock time of the runs
  double cpu = 1e30;   // best CPU time of the process, all threads together
};

// Best of `repeats` runs. On a machine shared with other work the CPU time
// still says what the work costs; the wall time says what it gave.
Timing best_of(int repeats, const std::function<void()>& run) {
  Timing best;
  for (int r = 0; r < repeats; ++r) {
    const auto start = Clock::now();
    const double cpu = process_cpu_seconds();
    run();
    best.wall = std::min(best.wall, seconds_since(start));
    best.cpu = std::min(best.cpu, process_cpu_seconds() - cpu);
  }
  return best;
}

// Reads the whole file with read(2) in 1 MiB blocks: what the disk (here the
// page cache) gives any reader.
uint64_t plain_read(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) std::exit(1);
  std::vector<char> buffer(size_t{1} << 20);
  uint64_t total = 0;
  ssize_t got;
  while ((got = ::read(fd, buffer.data(), buffer.size())) > 0) total += uint64_t(got);
  ::close(fd);
  return total;
}

// A photo-like 256x256 image: smooth gradients, shapes, blur and sensor noise.
cv::Mat synthetic_photo(std::mt19937& rng) {
  cv::Mat image(256, 256, CV_8UC3);
  std::uniform_int_distribution<int> c(0, 255), p(0, 255), r(8, 80);
  const cv::Scalar a(c(rng), c(rng), c(rng)), b(c(rng), c(rng), c(rng));
  for (int y = 0; y < 256; ++y) image.row(y).setTo(a * (1.0 - y / 255.0) + b * (y / 255.0));
  for (int k = 0; k < 12; ++k) {
    const cv::Scalar color(c(rng), c(rng), c(rng));
    if (k % 2)
      cv::circle(image, {p(rng), p(rng)}, r(rng), color, -1, cv::LINE_AA);
    else
      cv::rectangle(image, cv::Rect(p(rng), p(rng), r(rng), r(rng)), color, -1);
  }
  cv::GaussianBlur(image, image, {5, 5}, 1.5);
  cv::Mat noise(image.size(), CV_8SC3);
  cv::randn(noise, 0, 6);
  image += noise;  // saturating
  cv::Mat jitter(image.size(), CV_8UC3);
  cv::randu(jitter, 0, 12);
  image += jitter;
  return image;
}

void print_row(const char* what, double seconds, double count, double bytes) {
  std::printf("| %-44s | %10.0f | %9.0f |\n", what, count / seconds, bytes / seconds / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* v = argv[i + 1];
    if (flag == "--dir")
      o.dir = v;
    else if (flag == "--records")
      o.records = std::atoi(v);
    else if (flag == "--record-kb")
      o.record_kb = std::atoi(v);
    else if (flag == "--images")
      o.images = std::atoi(v);
    else if (flag == "--threads")
      o.threads = std::atoi(v);
    else if (flag == "--repeats")
      o.repeats = std::atoi(v);
    else {
      std::fprintf(stderr, "unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  if (o.threads <= 0) o.threads = thread_budget();
  const fs::path dir = o.dir.empty() ? fs::temp_directory_path() /
                                           ("mx_bench_recordio_" + std::to_string(::getpid()))
                                     : fs::path(o.dir);
  fs::create_directories(dir);
  const std::string raw = (dir / "raw.rec").string(), raw_idx = (dir / "raw.idx").string();
  const std::string jpegs = (dir / "jpeg.rec").string(), jpegs_idx = (dir / "jpeg.idx").string();

  // --- 1. raw records: sizes uniform in [K/2, 3K/2] KiB, random bytes.
  std::mt19937 rng(42);
  uint64_t payload_bytes = 0;
  {
    recordio::IndexedWriter writer(raw, raw_idx);
    std::uniform_int_distribution<int> size(o.record_kb * 512, o.record_kb * 1536);
    std::string payload;
    for (int i = 0; i < o.records; ++i) {
      payload.resize(size_t(size(rng)));
      for (size_t k = 0; k + 4 <= payload.size(); k += 4) {
        const uint32_t v = rng();
        std::memcpy(&payload[k], &v, 4);
      }
      payload_bytes += payload.size();
      writer.write(i, payload);
    }
    writer.commit();
  }
  const double file_bytes = double(fs::file_size(raw));
  plain_read(raw);  // into the page cache

  std::printf("## raw reading: %d records, %.1f MB (page cache), best of %d\n\n", o.records,
              file_bytes / 1e6, o.repeats);
  std::printf("| %-44s | %10s | %9s |\n", "reader", "records/s", "MB/s");
  std::printf("| %-44s | %10s | %9s |\n", "---", "---:", "---:");
  const double t_plain = best_of(o.repeats, [&] { plain_read(raw); }).wall;
  print_row("read(2), 1 MiB blocks (the limit)", t_plain, o.records, file_bytes);
  uint64_t check = 0;
  const double t_reader = best_of(o.repeats, [&] {
                            recordio::Reader reader(raw);
                            recordio::Record r;
                            check = 0;
                            while (reader.next(r)) check += r.payload.size();
                          }).wall;
  if (check != payload_bytes) std::fprintf(stderr, "reader lost bytes\n");
  print_row("recordio::Reader, sequential", t_reader, o.records, file_bytes);
  const double t_copy = best_of(o.repeats, [&] {
                          recordio::Reader reader(raw);
                          recordio::Record r;
                          std::string copy;
                          while (reader.next(r)) copy.assign(r.payload);
                        }).wall;
  print_row("recordio::Reader + copy of each payload", t_copy, o.records, file_bytes);
  auto indexed = recordio::IndexedReader::open(raw, raw_idx);
  const double t_indexed = best_of(o.repeats, [&] {
                             std::string payload;
                             for (size_t i = 0; i < indexed.size(); ++i) indexed.read(i, payload);
                           }).wall;
  print_row("IndexedReader, file order", t_indexed, o.records, file_bytes);
  std::vector<size_t> order(indexed.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Rng(3).shuffle(order);
  const double t_shuffled = best_of(o.repeats, [&] {
                              std::string payload;
                              for (size_t i : order) indexed.read(i, payload);
                            }).wall;
  print_row("IndexedReader, shuffled order", t_shuffled, o.records, file_bytes);
  std::printf("\nsequential reader / plain read: %.0f%%\n\n", 100.0 * t_plain / t_reader);

  // --- 2. 256x256 JPEGs (quality 90) packed as image records.
  std::vector<std::string> encoded;
  uint64_t jpeg_bytes = 0;
  {
    recordio::IndexedWriter writer(jpegs, jpegs_idx);
    std::vector<uchar> buffer;
    for (int i = 0; i < o.images; ++i) {
      cv::imencode(".jpg", synthetic_photo(rng), buffer, {cv::IMWRITE_JPEG_QUALITY, 90});
      encoded.emplace_back(reinterpret_cast<const char*>(buffer.data()), buffer.size());
      jpeg_bytes += buffer.size();
      writer.write(
          i, recordio::pack_image_record({0, float(i % 1000), uint64_t(i), 0}, {}, encoded.back()));
    }
    writer.commit();
  }
  std::printf("## decode + augment: %d JPEGs of 256x256 (mean %.1f KB), crop 224, one thread\n\n",
              o.images, double(jpeg_bytes) / o.images / 1e3);
  std::printf("| %-44s | %10s | %12s | %13s |\n", "step", "images/s", "images/CPU-s",
              "CPU ms/image");
  std::printf("| %-44s | %10s | %12s | %13s |\n", "---", "---:", "---:", "---:");
  const auto row = [&](const char* what, const Timing& t) {
    std::printf("| %-44s | %10.0f | %12.0f | %13.3f |\n", what, o.images / t.wall, o.images / t.cpu,
                1e3 * t.cpu / o.images);
  };
  row("cv::imdecode only", best_of(o.repeats, [&] {
        for (const auto& e : encoded) {
          cv::Mat m = cv::imdecode(cv::Mat(1, int(e.size()), CV_8U, const_cast<char*>(e.data())),
                                   cv::IMREAD_COLOR);
          if (m.empty()) std::exit(1);
        }
      }));
  ImageAugmentConfig config;
  config.rand_crop = true;
  config.rand_mirror = true;
  config.mean[0] = 123.68f, config.mean[1] = 116.28f, config.mean[2] = 103.53f;
  config.std[0] = 58.395f, config.std[1] = 57.12f, config.std[2] = 57.375f;
  ImageAugmenter augmenter(config);
  std::vector<float> out(3 * 224 * 224);
  row("decode + rand crop 224 + mirror + normalize", best_of(o.repeats, [&] {
        uint64_t n = 0;
        for (const auto& e : encoded) {
          Rng r = Rng::derive({1, n++});
          if (!augmenter.decode_into(e, r, out.data())) std::exit(1);
        }
      }));

  // --- 3. the iterator end to end. CPU time counts every thread of the
  // process: the reader, the workers, the consumer and the engine.
  std::printf("\n## ImageRecordIter: batches of 64, data (64, 3, 224, 224) float32, shuffled\n\n");
  std::printf("| %-18s | %10s | %10s | %12s |\n", "preprocess_threads", "images/s", "per thread",
              "images/CPU-s");
  std::printf("| %-18s | %10s | %10s | %12s |\n", "---", "---:", "---:", "---:");
  for (int threads = 1; threads <= o.threads; ++threads) {
    ImageRecordIterParam param =
        ImageRecordIterParam::from_strings({{"path_imgrec", jpegs},
                                            {"path_imgidx", jpegs_idx},
                                            {"data_shape", "(3, 224, 224)"},
                                            {"batch_size", "64"},
                                            {"shuffle", "1"},
                                            {"rand_crop", "1"},
                                            {"rand_mirror", "1"},
                                            {"mean_r", "123.68"},
                                            {"mean_g", "116.28"},
                                            {"mean_b", "103.53"},
                                            {"std_r", "58.395"},
                                            {"std_g", "57.12"},
                                            {"std_b", "57.375"},
                                            {"preprocess_threads", std::to_string(threads)}},
                                           "bench");
    ImageRecordIter iter(param);
    while (iter.next()) {
    }  // warm-up epoch
    uint64_t images = 0;
    const Timing t = best_of(o.repeats, [&] {
      iter.reset();
      images = 0;
      while (auto b = iter.next()) images += b->index.size();
    });
    std::printf("| %-18d | %10.0f | %10.0f | %12.0f |\n", threads, images / t.wall,
                images / t.wall / threads, images / t.cpu);
  }
  if (o.dir.empty()) fs::remove_all(dir);
  return 0;
}
