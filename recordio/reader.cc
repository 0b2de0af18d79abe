#include "recordio/reader.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "recordio/record_format.h"

namespace recordio {
namespace {

// Reads ahead this much when only headers are wanted: enough for many small
// records, little waste when records are large and their payloads skipped.
constexpr size_t kHeaderReadahead = 4096;

std::string hex(uint32_t value) {
  std::ostringstream os;
  os << "0x" << std::hex << value;
  return os.str();
}

}  // namespace

Reader::Reader(std::shared_ptr<const ByteSource> source, ReaderOptions options)
    : source_(std::move(source)), options_(std::move(options)), size_(source_->size()) {
  options_.buffer_size = std::max<size_t>(options_.buffer_size, 64);
  // A shard that starts inside the file begins at the first record that
  // starts in it; the bytes before belong to the previous shard.
  pos_ = options_.begin == 0 ? 0 : find_record_start(options_.begin);
}

Reader::Reader(const std::string& path, ReaderOptions options)
    : Reader(open_file(path), std::move(options)) {}

void Reader::seek(uint64_t offset) { pos_ = offset; }

size_t Reader::fill(uint64_t n) {
  const uint64_t have_end = buffer_offset_ + buffer_fill_;
  if (pos_ >= buffer_offset_ && pos_ + n <= have_end) return n;
  if (pos_ >= buffer_offset_ && pos_ < have_end) {
    const size_t keep = have_end - pos_;
    std::memmove(buffer_.data(), at(pos_), keep);
    buffer_fill_ = keep;
  } else {
    buffer_fill_ = 0;
  }
  buffer_offset_ = pos_;
  const uint64_t left = pos_ < size_ ? size_ - pos_ : 0;
  const uint64_t readahead = options_.headers_only ? kHeaderReadahead : options_.buffer_size;
  const uint64_t want = std::min(std::max(n, readahead), left);
  if (buffer_.size() < want) buffer_.resize(want);
  while (buffer_fill_ < want) {
    const size_t got = source_->read_at(buffer_offset_ + buffer_fill_,
                                        buffer_.data() + buffer_fill_, want - buffer_fill_);
    if (got == 0) break;
    buffer_fill_ += got;
  }
  return std::min<uint64_t>(n, buffer_fill_);
}

bool Reader::starts_record(const char* header, uint64_t offset) const {
  if (load_u32(header) != kMagic) return false;
  const uint32_t lrec = load_u32(header + 4);
  const uint32_t cflag = lrec_flag(lrec);
  if (cflag != kWhole && cflag != kFirst) return false;
  return padded_length(lrec_length(lrec)) <= size_ - offset - kHeaderSize;
}

uint64_t Reader::find_record_start(uint64_t from) {
  uint64_t p = (from + 3) & ~uint64_t{3};
  while (p < size_ && size_ - p >= kHeaderSize) {
    pos_ = p;
    const size_t avail = fill(std::min<uint64_t>(options_.buffer_size, size_ - p));
    if (avail < kHeaderSize) break;
    const char* b = at(p);
    size_t i = 0;
    for (; i + kHeaderSize <= avail; i += 4)
      if (starts_record(b + i, p + i)) return p + i;
    p += i;
  }
  return size_;
}

void Reader::damage(uint64_t at_offset, const std::string& what, uint64_t resume_from,
                    uint64_t lost_from) {
  if (!options_.on_damage) throw FormatError(name(), at_offset, what);
  const uint64_t next = find_record_start(resume_from);
  ++damaged_regions_;
  damaged_bytes_ += next > lost_from ? next - lost_from : 0;
  const std::string where = next < size_ ? "; reading resumes at the next record, byte " +
                                               std::to_string(next) + " (" +
                                               std::to_string(next - lost_from) + " bytes skipped)"
                                         : "; no record follows";
  options_.on_damage(FormatError(name(), at_offset, what + where));
  pos_ = next;
}

bool Reader::next(Record& record) {
  joined_.clear();
  bool in_parts = false;  // inside a record split into parts
  uint64_t first = 0;     // its first header
  uint32_t parts = 0;
  uint64_t joined_size = 0;
  const auto drop_parts = [&] {
    in_parts = false;
    joined_.clear();
    parts = 0;
    joined_size = 0;
  };

  while (true) {
    if (!in_parts && pos_ >= options_.end) return false;
    if (pos_ >= size_) {
      if (!in_parts) return false;
      const uint64_t lost = first;
      drop_parts();
      damage(lost, "the file ends inside a record split into parts (its last part is missing)",
             size_, lost);
      continue;
    }
    const uint64_t here = pos_;
    const size_t got = fill(kHeaderSize);
    if (got < kHeaderSize) {
      const uint64_t lost = in_parts ? first : here;
      drop_parts();
      damage(here,
             "the file ends " + std::to_string(got) +
                 " bytes into a record header (8 bytes); the file is truncated",
             size_, lost);
      continue;
    }
    const uint32_t magic = load_u32(at(here));
    const uint32_t lrec = load_u32(at(here) + 4);
    if (magic != kMagic) {
      const uint64_t lost = in_parts ? first : here;
      drop_parts();
      damage(here,
             "expected a record header (magic 0xced7230a), found " + hex(magic) +
                 "; the file is damaged or not a RecordIO file",
             here + 4, lost);
      continue;
    }
    const uint32_t cflag = lrec_flag(lrec);
    const uint64_t length = lrec_length(lrec);
    const uint64_t body = padded_length(length);
    if (cflag > kLast) {
      const uint64_t lost = in_parts ? first : here;
      drop_parts();
      damage(here, "record header has part flag " + std::to_string(cflag) + " (expected 0 to 3)",
             here + 4, lost);
      continue;
    }
    if (body > size_ - here - kHeaderSize) {
      const uint64_t lost = in_parts ? first : here;
      drop_parts();
      damage(here,
             "record length " + std::to_string(length) + " runs past the end of the file (" +
                 std::to_string(size_ - here - kHeaderSize) +
                 " bytes follow the header); the file is truncated",
             here + 4, lost);
      continue;
    }
    if (in_parts && (cflag == kWhole || cflag == kFirst)) {
      const uint64_t lost = first;
      drop_parts();
      damage(lost,
             "a record split into parts ends without its last part (a new record starts at "
             "byte " +
                 std::to_string(here) + ")",
             here, lost);
      continue;
    }
    if (!in_parts && (cflag == kMiddle || cflag == kLast)) {
      damage(here,
             "a continuation part (flag " + std::to_string(cflag) +
                 ") without the first part of its record",
             here + 4, here);
      continue;
    }

    std::string_view data;
    if (!options_.headers_only) {
      if (fill(kHeaderSize + body) < kHeaderSize + body) {
        const uint64_t lost = in_parts ? first : here;
        drop_parts();
        damage(here, "the file became shorter while it was read", size_, lost);
        continue;
      }
      data = std::string_view(at(here) + kHeaderSize, length);
    }
    pos_ = here + kHeaderSize + body;

    if (cflag == kWhole) {
      record.offset = here;
      record.end = pos_;
      record.parts = 1;
      record.payload_size = length;
      record.payload = data;
      return true;
    }
    if (cflag == kFirst) {
      in_parts = true;
      first = here;
    }
    ++parts;
    joined_size += length;
    if (!options_.headers_only) joined_.append(data);
    if (cflag == kLast) {
      record.offset = first;
      record.end = pos_;
      record.parts = parts;
      record.payload_size = joined_size;
      record.payload = joined_;
      return true;
    }
    // The writer split the payload at a magic here; put it back.
    joined_size += sizeof(kMagic);
    if (!options_.headers_only) joined_.append(reinterpret_cast<const char*>(&kMagic), 4);
  }
}

}  // namespace recordio
