#include "io/rec_inspect.h"

#include <algorithm>
#include <filesystem>
#include <iomanip>
#include <ostream>
#include <set>
#include <unordered_set>

#include "base/error.h"
#include "base/strings.h"
#include "base/threads.h"
#include "io/image_codec.h"
#include "io/image_probe.h"
#include "io/ordered_pipeline.h"
#include "io/recordio_errors.h"
#include "io/token_records.h"
#include "io/vocabulary.h"
#include "recordio/image_record.h"
#include "recordio/index_file.h"
#include "recordio/reader.h"

namespace mx {
namespace {

// Records handed to a worker at once (or fewer when they are large).
constexpr size_t kChunkRecords = 256;
constexpr size_t kChunkBytes = size_t{16} << 20;

struct RawRecord {
  uint64_t offset;
  uint32_t parts;
  std::string payload;
};

struct Chunk {
  std::vector<RawRecord> records;
  uint64_t end = 0;  // where the last record ends
};

// What a worker finds in a chunk; merged into the report in file order.
struct ChunkReport {
  InspectReport part;
  std::vector<uint64_t> starts;
  uint64_t end = 0;
};

bool decodes(std::string_view image) {
  if (image.empty() || image.size() > static_cast<size_t>(INT32_MAX) || !known_image_format(image))
    return false;
  return !decode_image(image, cv::IMREAD_UNCHANGED).empty();
}

// A token record (mx-pack text): counted, or a bad record.
void analyze_tokens(const std::string& file, const RawRecord& record, uint64_t vocab_size,
                    InspectReport& r) {
  TokenRecordView view;
  try {
    view = parse_token_record(record.payload, file, record.offset,
                              vocab_size > 0 ? vocab_size : uint64_t{INT32_MAX} + 1);
  } catch (const InputError& e) {
    r.bad_records.push_back(e.what());
    return;
  }
  ++r.token_records;
  if (view.header.position == 0) ++r.documents;
  r.tokens += view.header.count;
  for (size_t i = 0; i < view.header.count; ++i) r.max_id = std::max(r.max_id, view.id(i));
}

ChunkReport analyze(const std::string& file, Chunk&& chunk, const InspectOptions& options) {
  ChunkReport out;
  out.end = chunk.end;
  InspectReport& r = out.part;
  for (const auto& record : chunk.records) {
    ++r.records;
    r.payload_bytes += record.payload.size();
    if (record.parts > 1) ++r.split_records;
    out.starts.push_back(record.offset);
    if (is_token_record(record.payload)) {
      analyze_tokens(file, record, options.vocab_size, r);
      continue;
    }
    recordio::ImageRecordView view;
    try {
      view = recordio::parse_image_record(record.payload, file, record.offset);
    } catch (const recordio::FormatError& e) {
      r.bad_records.push_back(e.what());
      continue;
    }
    ++r.image_records;
    ++r.label_widths[view.num_labels];
    ++r.labels[view.label(0)];
    const auto info = probe_image(view.image);
    if (info) {
      ++r.formats[info->format];
      ++r.sizes[{info->width, info->height}];
      ++r.channels[info->channels];
    } else {
      ++r.formats["unknown"];
    }
    const auto bad_image = [&](const std::string& what) {
      r.bad_records.push_back(str(file, ": byte ", record.offset, ": record id ", view.header.id,
                                  ": ", what, " (", view.image.size(), " bytes, format ",
                                  guess_image_format(view.image), ")"));
    };
    if (options.decode) {
      ++r.decoded;
      if (!decodes(view.image)) bad_image("cannot decode the image");
    } else if (!info) {
      bad_image("the image is not JPEG, PNG, GIF or BMP");
    }
  }
  return out;
}

template <typename K>
void add_counts(std::map<K, uint64_t>& into, const std::map<K, uint64_t>& from) {
  for (const auto& [k, n] : from) into[k] += n;
}

void merge(InspectReport& into, ChunkReport&& chunk) {
  InspectReport& p = chunk.part;
  into.records += p.records;
  into.payload_bytes += p.payload_bytes;
  into.split_records += p.split_records;
  into.image_records += p.image_records;
  into.decoded += p.decoded;
  into.token_records += p.token_records;
  into.documents += p.documents;
  into.tokens += p.tokens;
  into.max_id = std::max(into.max_id, p.max_id);
  add_counts(into.label_widths, p.label_widths);
  add_counts(into.labels, p.labels);
  add_counts(into.formats, p.formats);
  add_counts(into.sizes, p.sizes);
  add_counts(into.channels, p.channels);
  for (auto& b : p.bad_records) into.bad_records.push_back(std::move(b));
}

// Whether the file's first record is a token record (mx-pack text).
bool holds_token_records(const std::string& rec_path) {
  try {
    recordio::Reader reader(rec_path);
    recordio::Record record;
    return reader.next(record) && is_token_record(record.payload);
  } catch (const recordio::Error&) {
    return false;  // inspect_rec reports what is wrong
  }
}

}  // namespace

InspectReport inspect_rec(const std::string& rec_path, const InspectOptions& options) {
  InspectReport report;
  report.rec_path = rec_path;
  report.idx_path = options.idx_path;
  report.vocab_size = options.vocab_size;
  std::vector<recordio::IndexEntry> index;
  if (!options.idx_path.empty())
    index = with_recordio_errors([&] { return recordio::read_index(options.idx_path); });

  std::vector<std::string> damaged;  // written on the producer thread only
  recordio::ReaderOptions reader_options;
  reader_options.on_damage = [&](const recordio::FormatError& e) { damaged.push_back(e.what()); };
  auto reader = with_recordio_errors(
      [&] { return std::make_unique<recordio::Reader>(rec_path, reader_options); });
  report.file_size = reader->file_size();

  std::unordered_set<uint64_t> starts;
  {
    OrderedPipeline<Chunk, ChunkReport> pipeline(
        [&]() -> std::optional<Chunk> {
          Chunk chunk;
          size_t bytes = 0;
          recordio::Record record;
          while (chunk.records.size() < kChunkRecords && bytes < kChunkBytes &&
                 with_recordio_errors([&] { return reader->next(record); })) {
            chunk.records.push_back({record.offset, record.parts, std::string(record.payload)});
            bytes += record.payload.size();
            chunk.end = record.end;
          }
          if (chunk.records.empty()) return std::nullopt;
          return chunk;
        },
        [&](Chunk&& chunk, int) { return analyze(rec_path, std::move(chunk), options); },
        options.threads, 2 * options.threads + 2);
    uint64_t last_progress = 0;
    while (auto chunk = pipeline.next()) {
      for (uint64_t s : chunk->starts) starts.insert(s);
      const uint64_t end = chunk->end;
      merge(report, std::move(*chunk));
      if (options.progress && end - last_progress > (uint64_t{64} << 20)) {
        last_progress = end;
        options.progress(end, report.file_size);
      }
    }
  }
  report.damaged = std::move(damaged);
  report.damaged_bytes = reader->damaged_bytes();
  if (options.progress) options.progress(report.file_size, report.file_size);

  if (!options.idx_path.empty()) {
    report.index_entries = index.size();
    std::set<uint64_t> indexed;
    for (size_t i = 0; i < index.size(); ++i) {
      const auto& e = index[i];
      if (!starts.count(e.offset))
        report.index_problems.push_back(
            str(options.idx_path, ":", i + 1, ": key ", e.key, ": offset ", e.offset,
                e.offset >= report.file_size
                    ? str(" is past the end of ", rec_path, " (", report.file_size, " bytes)")
                    : str(" is not the start of an intact record in ", rec_path)));
      indexed.insert(e.offset);
    }
    for (uint64_t s : starts)
      if (!indexed.count(s)) ++report.unindexed_records;
  }
  return report;
}

void print_report(std::ostream& out, const InspectReport& r, size_t limit) {
  const auto listing = [&](const char* title, const std::vector<std::string>& items) {
    if (items.empty()) return;
    out << "  " << title << ": " << items.size() << "\n";
    for (size_t i = 0; i < items.size() && i < limit; ++i) out << "    " << items[i] << "\n";
    if (items.size() > limit) out << "    ... and " << items.size() - limit << " more\n";
  };
  out << r.rec_path << ": " << r.records << " records, " << format_bytes(double(r.file_size))
      << " (payloads " << format_bytes(double(r.payload_bytes)) << ")";
  if (r.split_records) out << ", " << r.split_records << " written in parts";
  out << "\n";
  if (!r.idx_path.empty()) {
    out << "  index " << r.idx_path << ": " << r.index_entries << " entries";
    if (r.index_problems.empty() && r.unindexed_records == 0)
      out << ", every record indexed, every entry at a record start\n";
    else
      out << "\n";
    if (r.unindexed_records)
      out << "  records without an index entry: " << r.unindexed_records << "\n";
  }
  if (r.token_records > 0) {
    out << "  token records: " << r.token_records << " (" << r.documents << " documents, "
        << r.tokens << " tokens, ids 0.." << r.max_id << ")\n";
    if (r.vocab_size > 0)
      out << "  vocabulary " << r.vocab_path << ": " << r.vocab_size << " tokens\n";
    else
      out << "  vocabulary: none (" << (r.vocab_path.empty() ? "not looked for" : r.vocab_path)
          << " is missing); ids only checked to be >= 0\n";
  }
  if (r.image_records > 0 || r.token_records == 0)
    out << "  image records: " << r.image_records << "\n";
  if (!r.label_widths.empty()) {
    std::vector<std::string> widths;
    for (auto& [w, n] : r.label_widths) widths.push_back(str(w, " label(s): ", n));
    out << "  labels per record: " << join(widths, ", ") << "\n";
  }
  if (!r.labels.empty()) {
    out << "  first label histogram (" << r.labels.size() << " distinct):";
    size_t shown = 0;
    for (auto& [label, n] : r.labels) {
      if (shown++ == std::max<size_t>(limit, 20)) {
        out << " ...";
        break;
      }
      out << " " << label << ": " << n;
    }
    out << "\n";
  }
  if (!r.formats.empty()) {
    std::vector<std::string> formats;
    for (auto& [f, n] : r.formats) formats.push_back(str(f, ": ", n));
    out << "  formats: " << join(formats, ", ") << "\n";
  }
  if (!r.sizes.empty()) {
    std::vector<std::pair<uint64_t, std::pair<int, int>>> by_count;
    int min_w = INT32_MAX, min_h = INT32_MAX, max_w = 0, max_h = 0;
    for (auto& [size, n] : r.sizes) {
      by_count.push_back({n, size});
      min_w = std::min(min_w, size.first);
      max_w = std::max(max_w, size.first);
      min_h = std::min(min_h, size.second);
      max_h = std::max(max_h, size.second);
    }
    std::sort(by_count.begin(), by_count.end(), [](auto& a, auto& b) { return a.first > b.first; });
    out << "  image sizes (width x height): " << r.sizes.size() << " distinct, width " << min_w
        << ".." << max_w << ", height " << min_h << ".." << max_h << "; most common:";
    for (size_t i = 0; i < by_count.size() && i < 5; ++i)
      out << " " << by_count[i].second.first << "x" << by_count[i].second.second << " ("
          << by_count[i].first << ")";
    out << "\n";
    std::vector<std::string> channels;
    for (auto& [c, n] : r.channels) channels.push_back(str(c, ": ", n));
    out << "  channels: " << join(channels, ", ") << "\n";
  }
  if (r.decoded) out << "  decoded: " << r.decoded << " images\n";
  listing("damaged regions", r.damaged);
  if (r.damaged_bytes) out << "  bytes in damaged regions: " << r.damaged_bytes << "\n";
  listing("bad records", r.bad_records);
  listing("index problems", r.index_problems);
  out << "  verdict: " << (r.ok() ? "OK" : "PROBLEMS FOUND") << "\n";
}

void check_rec(std::ostream& out, const std::string& rec_path, const std::string& idx_path,
               bool no_idx, bool decode, int threads, size_t limit) {
  std::string idx = idx_path;
  if (idx.empty() && !no_idx) {
    const std::string guess = std::filesystem::path(rec_path).replace_extension(".idx").string();
    std::error_code ec;
    if (std::filesystem::exists(guess, ec)) idx = guess;
  }
  InspectOptions options;
  options.idx_path = no_idx ? "" : idx;
  options.decode = decode;
  options.threads = threads > 0 ? threads : thread_budget();
  const std::string vocab = holds_token_records(rec_path) ? vocabulary_path_for(rec_path) : "";
  std::error_code ec;
  if (!vocab.empty() && std::filesystem::exists(vocab, ec))
    options.vocab_size = read_vocabulary(vocab).size();
  InspectReport report = inspect_rec(rec_path, options);
  report.vocab_path = vocab;
  print_report(out, report, limit);
  if (!report.ok())
    throw InputError(str(rec_path, ": ", report.damaged.size(), " damaged region(s), ",
                         report.bad_records.size(), " bad record(s), ",
                         report.index_problems.size() + (report.unindexed_records ? 1 : 0),
                         " index problem(s)"));
}

}  // namespace mx
