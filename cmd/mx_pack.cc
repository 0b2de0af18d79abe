// mx-pack: packs data sets into MXNet RecordIO files (what MXNet's im2rec
// does, with its options and byte-identical lists), and inspects or verifies
// .rec files. The work is done by lib/io (image_list, pack, rec_inspect);
// this file reads the command line and names the outputs.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/file_util.h"
#include "base/strings.h"
#include "base/threads.h"
#include "io/csv_table.h"
#include "io/idx_file.h"
#include "io/image_list.h"
#include "io/pack.h"
#include "io/rec_inspect.h"
#include "io/recordio_errors.h"
#include "program.h"
#include "recordio/atomic_file.h"
#include "recordio/list_file.h"

namespace fs = std::filesystem;
using mx::InputError;
using mx::str;

namespace {

struct ListArgs {
  bool recursive = true;
  std::string exts = ".jpeg,.jpg,.png";
  std::optional<bool> shuffle;  // default: on when mx-pack makes the list
  uint64_t seed = 100;
  int chunks = 1;
  double train_ratio = 1.0, test_ratio = 0.0;
  int64_t limit = -1;
};

struct PackArgs {
  std::string source, prefix, format = "auto", root, labels;
  ListArgs list;
  int resize = 0;
  bool center_crop = false;
  std::string encoding = "auto";
  std::optional<int> quality;
  std::optional<int> color;
  bool pass_through = false, pack_label = false;
  int label_width = 1;
  std::string shape, csv_header = "auto";
  int threads = 0;
  bool strict = false, quiet = false;
};

void add_list_options(CLI::App& cmd, ListArgs& a) {
  cmd.add_flag("--recursive,!--no-recursive", a.recursive,
               "walk sub-folders; every folder holding images is a class, labelled in walk order "
               "as im2rec --recursive does (default); without it only the folder's own images, "
               "label 0");
  cmd.add_option("--exts", a.exts, "image file extensions, comma-separated (any case)")
      ->capture_default_str();
  cmd.add_flag_callback(
      "--shuffle", [&a] { a.shuffle = true; }, "shuffle the examples (default for folders)");
  cmd.add_flag_callback(
      "--no-shuffle", [&a] { a.shuffle = false; },
      "keep the source's order (default for .lst, IDX and CSV sources)");
  cmd.add_option("--seed", a.seed, "seed of the shuffle; 100 gives im2rec's order")
      ->capture_default_str();
  cmd.add_option("--chunks", a.chunks, "split into this many chunks (PREFIX_0, PREFIX_1, ...)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd.add_option("--train-ratio", a.train_ratio,
                 "fraction for PREFIX_train; below 1 also writes PREFIX_val (the rest)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--test-ratio", a.test_ratio, "fraction for PREFIX_test")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd.add_option("--limit", a.limit, "use only the first N examples of the source");
}

std::vector<std::string> parse_exts(const std::string& text) {
  std::vector<std::string> exts;
  for (auto& e : mx::split(text, ',')) {
    std::string ext = mx::trim(e);
    if (ext.empty()) continue;
    if (ext[0] != '.') ext = "." + ext;
    exts.push_back(ext);
  }
  if (exts.empty()) throw InputError("--exts lists no extension");
  return exts;
}

mx::SplitOptions split_options(const ListArgs& a, bool shuffle_default) {
  mx::SplitOptions s;
  s.shuffle = a.shuffle.value_or(shuffle_default);
  s.seed = a.seed;
  s.chunks = a.chunks;
  s.train_ratio = a.train_ratio;
  s.test_ratio = a.test_ratio;
  return s;
}

void write_list_file(const std::string& path, const std::vector<recordio::ListEntry>& entries) {
  mx::with_recordio_errors([&] {
    recordio::AtomicFile file(path);
    recordio::write_list(file.stream(), entries);
    file.commit();
  });
}

std::string detect_format(const std::string& source) {
  std::error_code ec;
  if (fs::is_directory(source, ec)) return "folder";
  mx::file_size(source);  // a clear error when it does not exist
  std::string name = mx::to_lower(fs::path(source).filename().string());
  if (name.size() > 3 && name.substr(name.size() - 3) == ".gz") name.resize(name.size() - 3);
  const auto ends_with = [&](const std::string& suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
  };
  if (ends_with(".lst")) return "lst";
  if (ends_with(".csv")) return "csv";
  if (name.find("idx") != std::string::npos || ends_with("ubyte")) return "idx";
  throw InputError("cannot tell what '" + source +
                   "' is (a folder, a .lst, an IDX file or a .csv); say it with --format");
}

std::string default_labels_path(const std::string& images) {
  std::string path = images;
  const size_t at = path.find("images-idx3");
  if (at == std::string::npos) return "";
  path.replace(at, 11, "labels-idx1");
  std::error_code ec;
  return fs::exists(path, ec) ? path : "";
}

// One line on stderr, redrawn in place on a terminal, every few seconds otherwise.
class ProgressLine {
 public:
  explicit ProgressLine(bool quiet) : quiet_(quiet), tty_(::isatty(2) != 0) {}
  ~ProgressLine() { finish(); }

  void update(const std::string& what, const mx::PackProgress& p) {
    if (quiet_) return;
    const auto now = std::chrono::steady_clock::now();
    const double interval = tty_ ? 0.25 : 5.0;
    if (p.done < p.total && std::chrono::duration<double>(now - last_).count() < interval) return;
    last_ = now;
    const double rate = p.seconds > 0 ? static_cast<double>(p.done) / p.seconds : 0;
    const double eta = rate > 0 ? static_cast<double>(p.total - p.done) / rate : 0;
    char line[256];
    std::snprintf(
        line, sizeof line, "%s: %llu/%llu (%.1f%%), %.0f records/s, %.1f MB/s, ETA %.0f s",
        what.c_str(), static_cast<unsigned long long>(p.done),
        static_cast<unsigned long long>(p.total),
        p.total ? 100.0 * static_cast<double>(p.done) / static_cast<double>(p.total) : 100.0, rate,
        p.seconds > 0 ? static_cast<double>(p.bytes) / p.seconds / 1e6 : 0.0, eta);
    if (tty_) {
      std::cerr << "\r" << line << "\033[K" << std::flush;
      open_ = true;
    } else {
      std::cerr << line << "\n";
    }
  }
  // Ends a line being redrawn, before other output.
  void finish() {
    if (open_) std::cerr << "\n";
    open_ = false;
  }

 private:
  bool quiet_, tty_, open_ = false;
  std::chrono::steady_clock::time_point last_{};
};

struct Source {
  std::unique_ptr<mx::ImageSource> images;
  std::vector<recordio::ListEntry> entries;
  std::vector<std::string> classes;
  bool made_list = false;  // the entries were listed from a folder (then .lst files are written)
};

Source open_source(PackArgs& a, const std::string& format) {
  Source s;
  const int64_t limit = a.list.limit;
  if (format == "folder") {
    mx::ImageListOptions options;
    options.recursive = a.list.recursive;
    options.exts = parse_exts(a.list.exts);
    auto list = mx::list_images(a.source, options);
    s.entries = std::move(list.entries);
    s.classes = std::move(list.classes);
    s.images = std::make_unique<mx::FolderSource>(a.source);
    s.made_list = true;
    if (s.entries.empty())
      throw InputError("no images with extensions " + a.list.exts + " in '" + a.source + "'" +
                       (a.list.recursive ? "" : " (without --recursive only its own files count)"));
  } else if (format == "lst") {
    s.entries = mx::with_recordio_errors([&] { return recordio::read_list(a.source); });
    const std::string root = a.root.empty() ? fs::path(a.source).parent_path().string() : a.root;
    s.images = std::make_unique<mx::FolderSource>(root.empty() ? "." : root);
  } else if (format == "idx") {
    const std::string labels = a.labels.empty() ? default_labels_path(a.source) : a.labels;
    if (labels.empty())
      throw InputError("no label file for '" + a.source + "': give it with --labels");
    mx::IdxArray images = mx::read_idx(a.source, limit);
    mx::IdxArray label_array = mx::read_idx(labels, limit);
    if (label_array.dims.size() != 1 || label_array.items() != images.items())
      throw InputError(str(labels, ": ", label_array.items(), " labels for ", images.items(),
                           " images in ", a.source));
    for (int64_t i = 0; i < images.items(); ++i)
      s.entries.push_back({i, {static_cast<float>(label_array.data[static_cast<size_t>(i)])}, ""});
    s.images = std::make_unique<mx::IdxSource>(a.source, std::move(images));
  } else if (format == "csv") {
    mx::CsvOptions options;
    options.header =
        a.csv_header == "yes" || (a.csv_header == "auto" && mx::csv_has_header(a.source));
    options.max_rows = limit;
    mx::CsvTable table = mx::read_csv(a.source, options);
    if (table.rows == 0) throw InputError("'" + a.source + "' has no rows");
    const int64_t pixels = table.cols - a.label_width;
    if (pixels <= 0)
      throw InputError(str(a.source, ": ", table.cols, " columns leave no pixels after ",
                           a.label_width, " label column(s)"));
    int channels = 1, height = 0, width = 0;
    if (a.shape.empty()) {
      const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(pixels))));
      if (side * side != pixels)
        throw InputError(str(a.source, ": ", pixels,
                             " pixel columns are not a square image; give --shape H,W or C,H,W"));
      height = width = static_cast<int>(side);
    } else {
      std::vector<int> dims;
      for (auto& d : mx::split(a.shape, ',')) dims.push_back(std::stoi(mx::trim(d)));
      if (dims.size() == 2) {
        height = dims[0];
        width = dims[1];
      } else if (dims.size() == 3 && (dims[0] == 1 || dims[0] == 3)) {
        channels = dims[0];
        height = dims[1];
        width = dims[2];
      } else {
        throw InputError("--shape '" + a.shape + "' is not H,W or C,H,W with C 1 or 3");
      }
    }
    for (int64_t r = 0; r < table.rows; ++r) {
      recordio::ListEntry e{r, {}, ""};
      for (int k = 0; k < a.label_width; ++k) e.labels.push_back(table.row(r)[k]);
      s.entries.push_back(std::move(e));
    }
    if (a.label_width > 1) a.pack_label = true;
    s.images = std::make_unique<mx::CsvSource>(a.source, std::move(table), a.label_width, channels,
                                               height, width);
  } else {
    throw InputError("--format '" + format + "' is not auto, folder, lst, idx or csv");
  }
  if (limit >= 0 && static_cast<int64_t>(s.entries.size()) > limit)
    s.entries.resize(static_cast<size_t>(limit));
  return s;
}

void run_pack(PackArgs& a) {
  const std::string format = a.format == "auto" ? detect_format(a.source) : a.format;
  Source source = open_source(a, format);
  const bool pixels = format == "idx" || format == "csv";

  mx::EncodeOptions encode;
  encode.resize = a.resize;
  encode.center_crop = a.center_crop;
  std::string encoding = a.encoding == "auto" ? (pixels ? "png" : "jpg") : a.encoding;
  if (!encoding.empty() && encoding[0] != '.') encoding = "." + encoding;
  encode.encoding = encoding;
  // im2rec passes --quality (default 95) to PNG too, where OpenCV clamps it to 9.
  encode.quality = a.quality.value_or(encoding == ".png" ? 9 : 95);
  encode.color = static_cast<mx::ColorMode>(a.color.value_or(pixels ? -1 : 1));
  encode.pass_through = a.pass_through;
  encode.pack_label = a.pack_label;
  mx::validate(encode, *source.images);

  const auto splits = mx::make_splits(source.entries, split_options(a.list, format == "folder"));
  const int threads = a.threads > 0 ? a.threads : mx::thread_budget();
  ProgressLine progress(a.quiet);
  uint64_t total_records = 0, total_skipped = 0;
  for (const auto& split : splits) {
    const std::string base = a.prefix + split.suffix;
    mx::PackOptions options;
    options.threads = threads;
    options.strict = a.strict;
    const std::string name = fs::path(base + ".rec").filename().string();
    options.progress = [&](const mx::PackProgress& p) { progress.update(name, p); };
    options.on_skip = [&](const std::string& what) {
      progress.finish();
      std::cerr << "mx-pack: skipped " << what << "\n";
    };
    mx::PackResult result = mx::pack_records(*source.images, split.entries, encode, base + ".rec",
                                             base + ".idx", options);
    progress.finish();
    if (source.made_list) write_list_file(base + ".lst", result.packed);
    const double rate = result.seconds > 0 ? result.packed.size() / result.seconds : 0;
    std::cout << base << ".rec: " << result.packed.size() << " records";
    if (!result.skipped.empty()) std::cout << " (" << result.skipped.size() << " skipped)";
    std::cout << ", " << mx::format_bytes(static_cast<double>(result.bytes)) << " in "
              << str(std::round(result.seconds * 100) / 100) << " s (" << std::llround(rate)
              << " records/s)\n  index " << base << ".idx";
    if (source.made_list) std::cout << ", list " << base << ".lst";
    std::cout << "\n";
    for (const auto& s : result.skipped) std::cout << "  skipped: " << s << "\n";
    total_records += result.packed.size();
    total_skipped += result.skipped.size();
  }
  if (splits.size() > 1)
    std::cout << "total: " << total_records << " records in " << splits.size() << " files"
              << (total_skipped ? str(", ", total_skipped, " images skipped") : "") << "\n";
  if (format == "folder" && a.list.recursive) {
    std::cout << "classes:";
    for (size_t i = 0; i < source.classes.size(); ++i)
      std::cout << (i ? ", " : " ") << i << " " << source.classes[i];
    std::cout << "\n";
  }
}

void run_list(PackArgs& a) {
  Source source = open_source(a, "folder");
  for (const auto& split : mx::make_splits(source.entries, split_options(a.list, true))) {
    write_list_file(a.prefix + split.suffix + ".lst", split.entries);
    std::cout << a.prefix << split.suffix << ".lst: " << split.entries.size() << " images\n";
  }
  std::cout << "classes:";
  for (size_t i = 0; i < source.classes.size(); ++i)
    std::cout << (i ? ", " : " ") << i << " " << source.classes[i];
  std::cout << "\n";
}

void run_inspect(const std::string& rec, std::string idx, bool no_idx, bool decode, int threads,
                 size_t limit) {
  if (idx.empty() && !no_idx) {
    const std::string guess = fs::path(rec).replace_extension(".idx").string();
    std::error_code ec;
    if (fs::exists(guess, ec)) idx = guess;
  }
  mx::InspectOptions options;
  options.idx_path = no_idx ? "" : idx;
  options.decode = decode;
  options.threads = threads > 0 ? threads : mx::thread_budget();
  const mx::InspectReport report = mx::inspect_rec(rec, options);
  mx::print_report(std::cout, report, limit);
  if (!report.ok())
    throw InputError(str(rec, ": ", report.damaged.size(), " damaged region(s), ",
                         report.bad_records.size(), " bad record(s), ",
                         report.index_problems.size() + (report.unindexed_records ? 1 : 0),
                         " index problem(s)"));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Pack data sets into MXNet RecordIO files (.rec + .idx, as im2rec does) and inspect or "
      "verify .rec files.\n\n"
      "  mx-pack pack images/ data --train-ratio 0.9     class folders -> data_train/val.rec\n"
      "  mx-pack pack data.lst data --root images/        an im2rec .lst -> data.rec\n"
      "  mx-pack pack train-images-idx3-ubyte.gz train    MNIST/Fashion-MNIST -> train.rec\n"
      "  mx-pack pack table.csv table --shape 28,28       label + pixel columns -> table.rec\n"
      "  mx-pack list images/ data                        only the .lst files (im2rec --list)\n"
      "  mx-pack inspect data.rec                         counts, labels, sizes, damage\n"
      "  mx-pack verify data.rec                          the same, decoding every image\n\n"
      "Exit codes: 0 success, 2 bad input (usage, malformed or damaged files), 1 other "
      "failures.",
      "mx-pack"};
  app.require_subcommand(1);
  PackArgs pack_args;

  CLI::App* pack = app.add_subcommand("pack", "pack a folder, a .lst, an IDX file or a CSV");
  pack->add_option("source", pack_args.source,
                   "a folder of class folders, a .lst, an IDX image file (.gz too) or a .csv")
      ->required();
  pack->add_option("prefix", pack_args.prefix,
                   "output prefix: writes PREFIX[_N][_train|_val|_test].rec, .idx (and .lst for "
                   "folders)")
      ->required();
  pack->add_option("--format", pack_args.format, "source kind: auto, folder, lst, idx, csv")
      ->capture_default_str();
  pack->add_option("--root", pack_args.root,
                   "folder the paths of a .lst are relative to "
                   "(default: the .lst's folder)");
  pack->add_option("--labels", pack_args.labels,
                   "IDX label file (default: the image file's name with labels-idx1)");
  add_list_options(*pack, pack_args.list);
  pack->add_option("--resize", pack_args.resize, "resize the shorter side to N pixels (0: keep)")
      ->check(CLI::NonNegativeNumber);
  pack->add_flag("--center-crop", pack_args.center_crop, "crop the center square first");
  pack->add_option("--encoding", pack_args.encoding,
                   "jpg or png (default: jpg for image files, png for IDX and CSV)");
  pack->add_option("--quality", pack_args.quality,
                   "JPEG quality 1-100 (default 95), or PNG compression 0-9 (default 9)");
  pack->add_option("--color", pack_args.color,
                   "1 color, 0 gray, -1 as stored (default: 1 for image files, -1 for IDX/CSV)")
      ->check(CLI::IsMember({-1, 0, 1}));
  pack->add_flag("--pass-through", pack_args.pass_through,
                 "store the image files' bytes unchanged (no decode, resize or re-encode)");
  pack->add_flag("--pack-label", pack_args.pack_label,
                 "store every label of a .lst line (several labels per record)");
  pack->add_option("--label-width", pack_args.label_width,
                   "CSV: the first N columns are labels (N > 1 packs several labels)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  pack->add_option("--shape", pack_args.shape,
                   "CSV: image shape H,W or C,H,W of the pixel columns (default: a square)");
  pack->add_option("--csv-header", pack_args.csv_header, "CSV: yes, no or auto")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
      ->capture_default_str();
  pack->add_option("-j,--threads,--num-thread", pack_args.threads,
                   "encoding threads (default: the thread budget, MX_NUM_THREADS or the cores)");
  pack->add_flag("--strict", pack_args.strict,
                 "stop at the first unreadable image instead of skipping and reporting it");
  pack->add_flag("-q,--quiet", pack_args.quiet, "no progress line");

  CLI::App* list =
      app.add_subcommand("list", "only make the .lst files of a folder (im2rec --list)");
  list->add_option("folder", pack_args.source, "a folder of class folders")->required();
  list->add_option("prefix", pack_args.prefix, "output prefix")->required();
  add_list_options(*list, pack_args.list);

  std::string rec, idx;
  bool no_idx = false;
  int inspect_threads = 0;
  size_t limit = 20;
  CLI::App* inspect = app.add_subcommand("inspect", "what a .rec holds and whether it is sound");
  CLI::App* verify = app.add_subcommand("verify", "inspect, decoding every image");
  for (CLI::App* cmd : {inspect, verify}) {
    cmd->add_option("rec", rec, "the .rec file")->required();
    cmd->add_option("--idx", idx, "its index (default: REC with .idx, when present)");
    cmd->add_flag("--no-idx", no_idx, "do not check an index");
    cmd->add_option("-j,--threads", inspect_threads, "threads (default: the thread budget)");
    cmd->add_option("--show", limit, "list at most N problems of each kind")->capture_default_str();
  }

  return mx::run_program(app, argc, argv, [&] {
    if (*pack) run_pack(pack_args);
    if (*list) run_list(pack_args);
    if (*inspect) run_inspect(rec, idx, no_idx, false, inspect_threads, limit);
    if (*verify) run_inspect(rec, idx, no_idx, true, inspect_threads, limit);
  });
}
