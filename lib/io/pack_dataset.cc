#include "io/pack_dataset.h"

#include <cmath>
#include <filesystem>
#include <iostream>

#include "base/error.h"
#include "base/strings.h"
#include "base/threads.h"
#include "io/image_list.h"
#include "io/pack.h"
#include "io/pack_progress.h"
#include "io/recordio_errors.h"
#include "recordio/atomic_file.h"

namespace fs = std::filesystem;

namespace mx {
namespace {

SplitOptions split_options(const PackDatasetOptions& o, bool shuffle_default) {
  SplitOptions s;
  s.shuffle = o.shuffle.value_or(shuffle_default);
  s.seed = o.seed;
  s.chunks = o.chunks;
  s.train_ratio = o.train_ratio;
  s.test_ratio = o.test_ratio;
  return s;
}

EncodeOptions encode_options(const PackDatasetOptions& o, const PackSource& source) {
  const bool pixels = source.format == "idx" || source.format == "csv";
  EncodeOptions encode;
  encode.resize = o.resize;
  encode.center_crop = o.center_crop;
  std::string encoding = o.encoding == "auto" ? (pixels ? "png" : "jpg") : o.encoding;
  if (!encoding.empty() && encoding[0] != '.') encoding = "." + encoding;
  encode.encoding = encoding;
  // im2rec passes --quality (default 95) to PNG too, where OpenCV clamps it to 9.
  encode.quality = o.quality.value_or(encoding == ".png" ? 9 : 95);
  encode.color = static_cast<ColorMode>(o.color.value_or(pixels ? -1 : 1));
  encode.pass_through = o.pass_through;
  encode.pack_label = o.pack_label || source.several_labels;
  return encode;
}

void write_list_file(const std::string& path, const std::vector<recordio::ListEntry>& entries) {
  with_recordio_errors([&] {
    recordio::AtomicFile file(path);
    recordio::write_list(file.stream(), entries);
    file.commit();
  });
}

void print_classes(std::ostream& out, const std::vector<std::string>& classes) {
  out << "classes:";
  for (size_t i = 0; i < classes.size(); ++i) out << (i ? ", " : " ") << i << " " << classes[i];
  out << "\n";
}

}  // namespace

void pack_dataset(const PackDatasetOptions& o, std::ostream& out) {
  PackSource source = open_pack_source(o.source);
  const EncodeOptions encode = encode_options(o, source);
  validate(encode, *source.images);

  const auto splits = make_splits(source.entries, split_options(o, source.format == "folder"));
  const int threads = o.threads > 0 ? o.threads : thread_budget();
  PackProgressLine progress(o.quiet);
  uint64_t total_records = 0, total_skipped = 0;
  for (const auto& split : splits) {
    const std::string base = o.prefix + split.suffix;
    PackOptions options;
    options.threads = threads;
    options.strict = o.strict;
    const std::string name = fs::path(base + ".rec").filename().string();
    options.progress = [&](const PackProgress& p) { progress.update(name, p); };
    options.on_skip = [&](const std::string& what) {
      progress.finish();
      std::cerr << "mx-pack: skipped " << what << "\n";
    };
    PackResult result =
        pack_records(*source.images, split.entries, encode, base + ".rec", base + ".idx", options);
    progress.finish();
    if (source.made_list) write_list_file(base + ".lst", result.packed);
    const double rate = result.seconds > 0 ? result.packed.size() / result.seconds : 0;
    out << base << ".rec: " << result.packed.size() << " records";
    if (!result.skipped.empty()) out << " (" << result.skipped.size() << " skipped)";
    out << ", " << format_bytes(static_cast<double>(result.bytes)) << " in "
        << str(std::round(result.seconds * 100) / 100) << " s (" << std::llround(rate)
        << " records/s)\n  index " << base << ".idx";
    if (source.made_list) out << ", list " << base << ".lst";
    out << "\n";
    for (const auto& s : result.skipped) out << "  skipped: " << s << "\n";
    total_records += result.packed.size();
    total_skipped += result.skipped.size();
  }
  if (splits.size() > 1)
    out << "total: " << total_records << " records in " << splits.size() << " files"
        << (total_skipped ? str(", ", total_skipped, " images skipped") : "") << "\n";
  if (source.format == "folder" && o.source.recursive) print_classes(out, source.classes);
}

void list_dataset(const PackDatasetOptions& o, std::ostream& out) {
  PackSourceOptions folder = o.source;
  folder.format = "folder";
  PackSource source = open_pack_source(folder);
  for (const auto& split : make_splits(source.entries, split_options(o, true))) {
    write_list_file(o.prefix + split.suffix + ".lst", split.entries);
    out << o.prefix << split.suffix << ".lst: " << split.entries.size() << " images\n";
  }
  print_classes(out, source.classes);
}

}  // namespace mx
