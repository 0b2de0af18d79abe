// Text for language models: UTF-8 checking, tokens and documents, the
// vocabulary file, token records, mx-pack text's outputs and TextIter's
// streams, labels and shards, with exact expected values.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/error.h"
#include "error_text.h"
#include "io/data_iter_factory.h"
#include "io/pack_text.h"
#include "io/rec_inspect.h"
#include "io/text_iter.h"
#include "io/text_tokens.h"
#include "io/token_records.h"
#include "io/utf8.h"
#include "io/vocabulary.h"
#include "recordio/indexed_writer.h"
#include "recordio/reader.h"
#include "recordio/writer.h"
#include "temp_dir.h"

using namespace mx;
using mx::test::error_text;
using mx::test::TempDir;
namespace fs = std::filesystem;

namespace {

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> tokens_of(std::string_view text, TokenKind kind) {
  std::vector<std::string> out;
  for_each_token(text, kind, [&](std::string_view t) { out.emplace_back(t); });
  return out;
}

std::vector<std::string> documents_of(std::string_view text, const DocumentSplit& split) {
  std::vector<std::string> out;
  for_each_document(text, split, [&](std::string_view d) { out.emplace_back(d); });
  return out;
}

std::string problem_at(std::string_view text) {
  const auto p = utf8::find_invalid(text);
  return p ? str(p->offset, ": ", p->what) : "valid";
}

// The whole token stream of a file.
std::vector<int32_t> stream_of(const std::string& rec, uint64_t vocab_size) {
  auto source = recordio::open_file(rec);
  const TokenFileLayout layout = scan_token_file(source);
  return read_tokens(source, layout, 0, layout.tokens, vocab_size);
}

// A token file whose stream is `ids`, in records of `per_record` ids, with a
// vocabulary of `vocab_size` tokens "<unk>", "t1", "t2", ...
void write_token_file(const std::string& prefix, const std::vector<int32_t>& ids, size_t vocab_size,
                      size_t per_record) {
  recordio::IndexedWriter writer(prefix + ".rec", prefix + ".idx");
  std::string payload;
  for (size_t first = 0, key = 0; first < ids.size(); first += per_record, ++key) {
    const size_t count = std::min(per_record, ids.size() - first);
    pack_token_record({static_cast<uint32_t>(count), 0, first},
                      std::span<const int32_t>(ids).subspan(first, count), payload);
    writer.write(static_cast<int64_t>(key), payload);
  }
  writer.commit();
  std::ofstream vocab(prefix + ".vocab");
  vocab << "<unk>\n";
  for (size_t i = 1; i < vocab_size; ++i) vocab << "t" << i << "\n";
}

std::vector<int32_t> iota_ids(int32_t count) {
  std::vector<int32_t> ids(static_cast<size_t>(count));
  for (int32_t i = 0; i < count; ++i) ids[static_cast<size_t>(i)] = i;
  return ids;
}

TextIter make_text_iter(const std::map<std::string, std::string>& params) {
  auto all = params;
  all["silent"] = "True";
  return TextIter(TextIterParam::from_strings(all, "test"));
}

// Row b of a (batch, seq_len) array.
std::vector<float> row(const NDArray& a, size_t b, size_t seq_len) {
  const auto values = a.to_vector<float>();
  return std::vector<float>(values.begin() + static_cast<std::ptrdiff_t>(b * seq_len),
                            values.begin() + static_cast<std::ptrdiff_t>((b + 1) * seq_len));
}

std::vector<float> range_of(float first, size_t count) {
  std::vector<float> out(count);
  for (size_t i = 0; i < count; ++i) out[i] = first + static_cast<float>(i);
  return out;
}

}  // namespace

TEST_CASE("UTF-8: every kind of bad byte with its offset") {
  CHECK(problem_at("plain ASCII\n") == "valid");
  CHECK(problem_at("caf\xc3\xa9 \xe2\x82\xac \xf0\x9d\x84\x9e") == "valid");  // é € 𝄞
  CHECK(problem_at("\xc3\x28") ==
        "1: byte 0x28 should continue the character that byte 0xc3 at byte 0 starts (0x80..0xbf)");
  CHECK(problem_at("ab\x80") == "2: byte 0x80 continues a character, but none was started");
  CHECK(problem_at("\xc0\xaf") == "0: byte 0xc0 starts an overlong encoding");
  CHECK(problem_at("x\xe0\x80\x80") == "1: bytes 0xe0 0x80 are an overlong encoding");
  CHECK(problem_at("\xed\xa0\x80") ==
        "0: bytes 0xed 0xa0 are an encoded surrogate (U+D800..U+DFFF)");
  CHECK(problem_at("\xf4\x90\x80\x80") == "0: bytes 0xf4 0x90 are a code point above U+10FFFF");
  CHECK(problem_at("\xf0\x9d\x84") ==
        "0: the text ends inside the 4-byte character that byte 0xf0 starts");
  CHECK(problem_at("\xe2\x82\x41") ==
        "2: byte 0x41 should continue the character that byte 0xe2 at byte 0 starts (0x80..0xbf)");
  CHECK(problem_at("ok \xff") == "3: byte 0xff can never appear in UTF-8");
  CHECK(error_text([] { utf8::check("x\xf5", "f.txt"); }) ==
        "f.txt: byte 1: invalid UTF-8: byte 0xf5 can never appear in UTF-8");

  size_t length = 0;
  CHECK(utf8::decode("\xf0\x9d\x84\x9e", 0, length) == U'\U0001D11E');
  CHECK(length == 4);
  CHECK(utf8::decode("a\xc3\xa9", 1, length) == U'\u00e9');
  CHECK(length == 2);
  // Python's str.isspace().
  for (char32_t c :
       {U'\t', U'\n', U'\x0b', U'\x0c', U'\r', U'\x1c', U'\x1f', U' ', U'\u0085', U'\u00a0',
        U'\u1680', U'\u2000', U'\u200a', U'\u2028', U'\u2029', U'\u202f', U'\u205f', U'\u3000'})
    CHECK(utf8::is_space(c));
  for (char32_t c : {U'a', U'\x08', U'\x7f', U'\u200b', U'\u2060', U'\ufeff', U'\u1fff'})
    CHECK_FALSE(utf8::is_space(c));
}

TEST_CASE("tokens: code points, or words split as Python's str.split()") {
  using V = std::vector<std::string>;
  CHECK(tokens_of("a\xc3\xa9\xe2\x82\xac\xf0\x9d\x84\x9e\n ", TokenKind::kChar) ==
        V{"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9d\x84\x9e", "\n", " "});
  CHECK(tokens_of(" two\twords\n", TokenKind::kWord) == V{"two", "words"});
  // A no-break space and an ideographic space separate words; a zero-width
  // space does not.
  CHECK(tokens_of("caf\xc3\xa9\xc2\xa0\xe2\x82\xac"
                  "5\xe3\x80\x80x\xe2\x80\x8by",
                  TokenKind::kWord) == V{"caf\xc3\xa9",
                                         "\xe2\x82\xac"
                                         "5",
                                         "x\xe2\x80\x8by"});
  CHECK(tokens_of("  \n\t", TokenKind::kWord).empty());
  CHECK(tokens_of("", TokenKind::kChar).empty());
}

TEST_CASE("documents: the whole file, separator lines, each line") {
  using V = std::vector<std::string>;
  const std::string fortunes = "one\n%\ntwo\nlines\n%\n%\nthree\n%\n";
  CHECK(documents_of(fortunes, {}) == V{fortunes});
  CHECK(documents_of(fortunes, {"%", false}) == V{"one\n", "two\nlines\n", "", "three\n"});
  // The last document needs no separator after it; "%x" is not a separator.
  CHECK(documents_of("a\n%\n%x\nb", {"%", false}) == V{"a\n", "%x\nb"});
  // An empty separator: paragraphs.
  CHECK(documents_of("p1\np1\n\np2\n", {"", false}) == V{"p1\np1\n", "p2\n"});
  CHECK(documents_of("l1\n\nl3", {std::nullopt, true}) == V{"l1", "", "l3"});

  std::string text =
      "\xef\xbb\xbf"
      "a\r\nb\rc\r\n";
  normalize_text(text);
  CHECK(text == "a\nb\rc\n");
}

TEST_CASE("vocabulary: counts, ties by first appearance, the cap, special tokens") {
  const std::string text = "b a c a b d <unk> e";
  TokenCounter counter;
  for_each_token(text, TokenKind::kWord, [&](std::string_view t) { counter.add(t); });
  using V = std::vector<std::string>;
  // a and b twice (b first), then c, d, e once each in order of appearance.
  CHECK(build_vocabulary(counter, {"<unk>", "<eos>"}, 0).tokens() ==
        V{"<unk>", "<eos>", "b", "a", "c", "d", "e"});
  const Vocabulary capped = build_vocabulary(counter, {"<unk>", "<eos>"}, 5);
  CHECK(capped.tokens() == V{"<unk>", "<eos>", "b", "a", "c"});
  CHECK(capped.id("a") == 3);
  CHECK(capped.id("d") == 0);
  CHECK(capped.id("<eos>") == 1);
  CHECK(capped.find("e") == std::nullopt);
  CHECK(build_vocabulary(counter, {"<unk>"}, 2).tokens() == V{"<unk>", "b"});

  // Characters: one-byte and multi-byte tokens counted alike.
  TokenCounter chars;
  for_each_token(
      "\xc3\xa9"
      "a\xc3\xa9"
      "b",
      TokenKind::kChar, [&](std::string_view t) { chars.add(t); });
  CHECK(build_vocabulary(chars, {"?"}, 0).tokens() == V{"?", "\xc3\xa9", "a", "b"});
}

TEST_CASE("vocabulary file: escapes, round trip, errors with the line") {
  const Vocabulary v({"<unk>", "\n", " ", "\\", "\t", "\r", "\x01", "\xc3\xa9", "a b", "\x7f"});
  std::ostringstream out;
  write_vocabulary(out, v);
  CHECK(out.str() == "<unk>\n\\n\n\\s\n\\\\\n\\t\n\\r\n\\x01\n\xc3\xa9\na\\sb\n\\x7f\n");
  const Vocabulary back = parse_vocabulary(out.str(), "v");
  CHECK(back.tokens() == v.tokens());
  CHECK(back.id("\n") == 1);
  CHECK(back.id(" ") == 2);
  CHECK(back.id("\xc3\xa9") == 7);
  // Without a final newline, with CRLF line ends.
  CHECK(parse_vocabulary("<unk>\r\nx\r\ny", "v").tokens() ==
        std::vector<std::string>{"<unk>", "x", "y"});

  CHECK(error_text([] { parse_vocabulary("<unk>\na\nb\na\n", "v.vocab"); }) ==
        "v.vocab:4: token 'a' repeats line 2");
  CHECK(error_text([] { parse_vocabulary("<unk>\n\\s\n \n", "v.vocab"); }) ==
        "v.vocab:3: token '\\s' repeats line 2");
  CHECK(error_text([] { parse_vocabulary("<unk>\n\nb\n", "v.vocab"); }) ==
        "v.vocab:2: an empty line; every line is a token (a space is written \\s)");
  CHECK(error_text([] { parse_vocabulary("<unk>\nab\\q\n", "v.vocab"); }) ==
        "v.vocab:2: column 3: unknown escape \\q (escapes: \\\\ \\n \\t \\r \\s \\xHH)");
  CHECK(error_text([] { parse_vocabulary("<unk>\n\\x4\n", "v.vocab"); }) ==
        "v.vocab:2: column 1: \\x needs two hexadecimal digits (escapes: \\\\ \\n \\t \\r \\s "
        "\\xHH)");
  CHECK(error_text([] { parse_vocabulary("<unk>\n\\x41\n", "v.vocab"); }) ==
        "v.vocab:2: column 1: \\x41 is not an ASCII control character (00..1f, 7f); write it as "
        "it is (escapes: \\\\ \\n \\t \\r \\s \\xHH)");
  CHECK(error_text([] { parse_vocabulary("<unk>\nx\\", "v.vocab"); }) ==
        "v.vocab:2: column 2: a backslash ends the line (escapes: \\\\ \\n \\t \\r \\s \\xHH)");
  CHECK(error_text([] { parse_vocabulary("<unk>\na\nb\nc\n", "v.vocab", 3, "--max-vocab 3"); }) ==
        "v.vocab:4: the vocabulary holds more than 3 tokens (--max-vocab 3)");
  CHECK(parse_vocabulary("<unk>\na\nb\n", "v.vocab", 3).size() == 3);
  CHECK(error_text([] { parse_vocabulary("", "v.vocab"); }) ==
        "v.vocab: the vocabulary is empty (line 1 must be the unknown token)");
  CHECK(error_text([] { parse_vocabulary("<unk>\nz\xc3", "v.vocab"); }) ==
        "v.vocab: byte 7: invalid UTF-8: the text ends inside the 2-byte character that byte 0xc3 "
        "starts");
}

TEST_CASE("token records: layout, checks, ranges across records") {
  std::string payload;
  const std::vector<int32_t> ids{5, 0, 7};
  pack_token_record({3, 9, 16384}, ids, payload);
  CHECK(payload.size() == 24 + 12);
  CHECK(payload.substr(0, 8) == std::string("MXTK\x03\x00\x00\x00", 8));
  CHECK(payload.substr(8, 8) == std::string("\x09\0\0\0\0\0\0\0", 8));
  CHECK(payload.substr(16, 8) == std::string("\x00\x40\0\0\0\0\0\0", 8));
  CHECK(payload.substr(24, 4) == std::string("\x05\0\0\0", 4));
  const TokenRecordView view = parse_token_record(payload, "f.rec", 40, 8);
  CHECK(view.header.count == 3);
  CHECK(view.header.document == 9);
  CHECK(view.header.position == 16384);
  CHECK(view.id(2) == 7);

  CHECK(error_text([&] { parse_token_record(payload, "f.rec", 40, 7); }) ==
        "f.rec: byte 40: token record: id 2 of document 9 is 7, outside the vocabulary's 7 tokens");
  CHECK(error_text([&] { parse_token_record(payload.substr(0, 30), "f.rec", 40, 8); }) ==
        "f.rec: byte 40: token record: the header announces 3 ids (12 bytes), but 6 bytes follow "
        "it");
  CHECK(
      error_text([&] { parse_token_record("MXTK", "f.rec", 0, 8); })
          .find(
              "f.rec: byte 0: token record: the payload (4 bytes) does not start with the 24-byte "
              "header") == 0);
  std::string negative = payload;
  negative[28] = '\xff';
  negative[29] = negative[30] = negative[31] = '\xff';
  CHECK(error_text([&] { parse_token_record(negative, "f.rec", 0, 8); }) ==
        "f.rec: byte 0: token record: id 1 of document 9 is -1, outside the vocabulary's 8 tokens");

  // Records of 4, 4 and 2 ids; ranges that start and end inside records.
  TempDir dir;
  write_token_file(dir.file("s"), iota_ids(10), 16, 4);
  auto source = recordio::open_file(dir.file("s.rec"));
  const TokenFileLayout layout = scan_token_file(source);
  CHECK(layout.tokens == 10);
  CHECK(layout.counts == std::vector<uint64_t>{4, 4, 2});
  CHECK(layout.offsets == std::vector<uint64_t>{0, 48, 96});
  CHECK(read_tokens(source, layout, 3, 9, 16) == std::vector<int32_t>{3, 4, 5, 6, 7, 8});
  CHECK(read_tokens(source, layout, 8, 10, 16) == std::vector<int32_t>{8, 9});
  CHECK(read_tokens(source, layout, 4, 4, 16).empty());
  CHECK(error_text([&] { read_tokens(source, layout, 0, 10, 9); }) ==
        dir.file("s.rec") + ": byte 96: token record: id 1 of document 0 is 9, outside the " +
            "vocabulary's 9 tokens");

  // Not a token file: an image record's payload size.
  {
    recordio::IndexedWriter writer(dir.file("img.rec"), dir.file("img.idx"));
    writer.write(0, std::string(30, 'x'));
    writer.commit();
  }
  CHECK(error_text([&] { scan_token_file(recordio::open_file(dir.file("img.rec"))); }) ==
        dir.file("img.rec") + ": byte 0: a payload of 30 bytes is not a token record (24-byte " +
            "header, 4 bytes per id); is this a token .rec from mx-pack text?");
}

TEST_CASE("mx-pack text: exact ids, documents, records, the vocabulary beside") {
  TempDir dir;
  // Two fortune files; é is two bytes, € three.
  write_bytes(dir.file("a"), "ab\n%\nb\xc3\xa9\n%\n");
  write_bytes(dir.file("b"),
              "\xe2\x82\xac"
              "a\n%\n");
  write_bytes(dir.file("a.dat"), "\xff\xfe binary index");
  PackTextOptions o;
  o.inputs = {dir.path().string()};
  o.exclude = {"*.dat"};
  o.prefix = dir.file("out");
  o.record_separator = "%";
  o.record_tokens = 3;
  std::ostringstream out;
  pack_text(o, out);
  CHECK(out.str().find(dir.file("out") + ".rec: 3 documents, 12 tokens in 6 records") == 0);
  // Counts: \n 3, a 2, b 2 (a first), é 1, € 1.
  const Vocabulary v = read_vocabulary(dir.file("out.vocab"));
  CHECK(v.tokens() ==
        std::vector<std::string>{"<unk>", "<eos>", "\n", "a", "b", "\xc3\xa9", "\xe2\x82\xac"});
  CHECK(read_bytes(dir.file("out.vocab")) == "<unk>\n<eos>\n\\n\na\nb\n\xc3\xa9\n\xe2\x82\xac\n");
  CHECK(stream_of(dir.file("out.rec"), v.size()) ==
        std::vector<int32_t>{3, 4, 2, 1, 4, 5, 2, 1, 6, 3, 2, 1});
  // Each document in records of at most 3 ids: (document, position, count).
  recordio::Reader reader(dir.file("out.rec"));
  recordio::Record record;
  std::vector<std::array<uint64_t, 3>> headers;
  while (reader.next(record)) {
    const auto h = parse_token_record(record.payload, "out.rec", record.offset, v.size()).header;
    headers.push_back({h.document, h.position, h.count});
  }
  CHECK(headers == std::vector<std::array<uint64_t, 3>>{
                       {0, 0, 3}, {0, 3, 1}, {1, 0, 3}, {1, 3, 1}, {2, 0, 3}, {2, 3, 1}});
  // Records of 8 + 24 + 12 and 8 + 24 + 4 bytes.
  CHECK(read_bytes(dir.file("out.idx")) == "0\t0\n1\t44\n2\t80\n3\t124\n4\t160\n5\t204\n");

  // Words, one document per line, no end token, capped: "x" (3), "y" (2)
  // kept; "z" (2, but seen after y) and "w" (1) become the unknown token.
  write_bytes(dir.file("words.txt"), "x y z\n\nz x  w\ny x\n");
  PackTextOptions w;
  w.inputs = {dir.file("words.txt")};
  w.prefix = dir.file("w");
  w.tokens = "word";
  w.line_records = true;
  w.end_token = "";
  w.max_vocab = 3;
  w.unk = "?";
  pack_text(w, out);
  CHECK(read_vocabulary(dir.file("w.vocab")).tokens() == std::vector<std::string>{"?", "x", "y"});
  CHECK(stream_of(dir.file("w.rec"), 3) == std::vector<int32_t>{1, 2, 0, 0, 1, 0, 2, 1});
}

TEST_CASE("mx-pack text: validation documents spread evenly, one vocabulary, reuse") {
  TempDir dir;
  write_bytes(dir.file("t.txt"), "a\nb\nc\nd\ne\n");
  PackTextOptions o;
  o.inputs = {dir.file("t.txt")};
  o.prefix = dir.file("p");
  o.line_records = true;
  o.val_ratio = 0.4;  // documents 2 and 4, c and e: floor(0.4 * (i + 1)) steps up there
  std::ostringstream out;
  pack_text(o, out);
  CHECK_FALSE(fs::exists(dir.file("p.rec")));
  // The vocabulary counts the training documents only: a, b, d.
  const Vocabulary v = read_vocabulary(dir.file("p.vocab"));
  CHECK(v.tokens() == std::vector<std::string>{"<unk>", "<eos>", "a", "b", "d"});
  CHECK(stream_of(dir.file("p_train.rec"), v.size()) == std::vector<int32_t>{2, 1, 3, 1, 4, 1});
  CHECK(stream_of(dir.file("p_val.rec"), v.size()) == std::vector<int32_t>{0, 1, 0, 1});
  CHECK(out.str().find("p_val.rec: 2 documents, 4 tokens in 2 records") != std::string::npos);
  CHECK(out.str().find("2 unknown (50%)") != std::string::npos);
  CHECK(vocabulary_path_for(dir.file("p_val.rec")) == dir.file("p.vocab"));
  CHECK(vocabulary_path_for(dir.file("p.rec")) == dir.file("p.vocab"));

  // Another file with the same vocabulary: the same ids, a copy beside it.
  write_bytes(dir.file("u.txt"), "d\nz\n");
  PackTextOptions reuse;
  reuse.inputs = {dir.file("u.txt")};
  reuse.prefix = dir.file("u");
  reuse.line_records = true;
  reuse.vocab = dir.file("p.vocab");
  pack_text(reuse, out);
  CHECK(stream_of(dir.file("u.rec"), v.size()) == std::vector<int32_t>{4, 1, 0, 1});
  CHECK(read_bytes(dir.file("u.vocab")) == read_bytes(dir.file("p.vocab")));
  reuse.max_vocab = 4;
  CHECK(error_text([&] { pack_text(reuse, out); }) ==
        dir.file("p.vocab") + ":5: the vocabulary holds more than 4 tokens (--max-vocab 4)");
  reuse.max_vocab = 0;
  reuse.end_token = "</s>";
  CHECK(error_text([&] { pack_text(reuse, out); }) ==
        "the end token '</s>' is not in " + dir.file("p.vocab") +
            " (--end-token names another, --end-token '' none)");
}

TEST_CASE("mx-pack text: bad text names the file and byte; nothing is written") {
  TempDir dir;
  write_bytes(dir.file("good.txt"), "fine text\n");
  write_bytes(dir.file("bad.txt"), "fine\n\xe2\x82\n");
  write_bytes(dir.file("empty.txt"), "");
  write_bytes(dir.file("seps.txt"), "%\n%\n");
  PackTextOptions o;
  o.prefix = dir.file("out");
  std::ostringstream out;
  o.inputs = {dir.file("good.txt"), dir.file("bad.txt")};
  CHECK(error_text([&] { pack_text(o, out); }) ==
        dir.file("bad.txt") + ": byte 7: invalid UTF-8: byte 0x0a should continue the character " +
            "that byte 0xe2 at byte 5 starts (0x80..0xbf)");
  o.inputs = {dir.file("good.txt"), dir.file("empty.txt")};
  CHECK(error_text([&] { pack_text(o, out); }) == dir.file("empty.txt") + ": the file is empty");
  o.inputs = {dir.file("seps.txt")};
  o.record_separator = "%";
  CHECK(error_text([&] { pack_text(o, out); }) ==
        dir.file("seps.txt") +
            ": no tokens in its 4 bytes (empty lines and record separators only)");
  o.inputs = {dir.file("good.txt")};
  o.val_ratio = 0.5;
  CHECK(error_text([&] { pack_text(o, out); }) ==
        "--val-ratio 0.5 leaves the validation part empty (1 document in all)");
  o.val_ratio = 0;
  o.max_vocab = 2;
  CHECK(error_text([&] { pack_text(o, out); }) ==
        "--max-vocab 2 leaves no room beside the unknown and end tokens");
  o.max_vocab = 0;
  o.end_token = "<unk>";
  CHECK(error_text([&] { pack_text(o, out); }) == "--end-token '<unk>' is also the unknown token");
  o.end_token = "<eos>";
  o.tokens = "bytes";
  CHECK(error_text([&] { pack_text(o, out); }) == "--tokens 'bytes' is not 'char' or 'word'");
  // Only the inputs are there: no output, no temporary file.
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.insert(e.path().filename());
  CHECK(names == std::set<std::string>{"bad.txt", "empty.txt", "good.txt", "seps.txt"});
  // A folder that cannot be written to is a runtime failure.
  o.tokens = "char";
  o.prefix = dir.file("missing/out");
  CHECK(error_text<Error>([&] { pack_text(o, out); }).find("cannot write") == 0);
}

TEST_CASE("TextIter: streams, next-token labels, batches carry on, epochs start over") {
  TempDir dir;
  // The stream 0, 1, ..., 49: L = 50, B = 3 streams of M = floor(49 / 3) = 16.
  write_token_file(dir.file("s"), iota_ids(50), 64, 7);
  TextIter iter =
      make_text_iter({{"path_rec", dir.file("s.rec")}, {"batch_size", "3"}, {"seq_len", "4"}});
  CHECK(iter.vocab_size() == 64);
  CHECK(iter.vocab_path() == dir.file("s.vocab"));
  CHECK(iter.stream_tokens() == 16);
  CHECK(iter.batches_per_epoch() == 4);
  CHECK(iter.data_shape() == Shape{3, 4});
  CHECK(iter.label_shape() == Shape{3, 4});
  for (int epoch = 0; epoch < 2; ++epoch) {
    for (size_t i = 0; i < 4; ++i) {
      auto batch = iter.next();
      REQUIRE(batch);
      CHECK(batch->pad == 0);
      for (size_t b = 0; b < 3; ++b) {
        const float first = static_cast<float>(16 * b + 4 * i);
        CHECK(row(batch->data, b, 4) == range_of(first, 4));
        CHECK(row(batch->label, b, 4) == range_of(first + 1, 4));
        CHECK(batch->index[b] == 16 * b + 4 * i);
      }
    }
    CHECK_FALSE(iter.next());
    iter.reset();
  }

  // Ids that are not 0, 1, 2, ...: labels are the following tokens.
  write_token_file(dir.file("r"), {9, 8, 7, 6, 5, 4, 3}, 10, 2);
  TextIter r =
      make_text_iter({{"path_rec", dir.file("r.rec")}, {"batch_size", "2"}, {"seq_len", "2"}});
  auto batch = r.next();
  REQUIRE(batch);
  CHECK(batch->data.to_vector<float>() == std::vector<float>{9, 8, 6, 5});
  CHECK(batch->label.to_vector<float>() == std::vector<float>{8, 7, 5, 4});
  CHECK_FALSE(r.next());
}

TEST_CASE("TextIter: contiguous shards for distributed workers") {
  TempDir dir;
  write_token_file(dir.file("s"), iota_ids(50), 64, 8);
  // Parts [0, 25) and [25, 50); 2 streams of floor(24 / 2) = 12, 4 batches of 3.
  for (int part = 0; part < 2; ++part) {
    TextIter iter = make_text_iter({{"path_rec", dir.file("s.rec")},
                                    {"batch_size", "2"},
                                    {"seq_len", "3"},
                                    {"num_parts", "2"},
                                    {"part_index", std::to_string(part)}});
    CHECK(iter.part_tokens() == 25);
    CHECK(iter.batches_per_epoch() == 4);
    const float base = 25.0f * static_cast<float>(part);
    for (size_t i = 0; i < 4; ++i) {
      auto batch = iter.next();
      REQUIRE(batch);
      CHECK(row(batch->data, 0, 3) == range_of(base + 3 * i, 3));
      CHECK(row(batch->data, 1, 3) == range_of(base + 12 + 3 * i, 3));
      CHECK(row(batch->label, 1, 3) == range_of(base + 13 + 3 * i, 3));
      CHECK(batch->index[1] == static_cast<uint64_t>(base) + 12 + 3 * i);
    }
    CHECK_FALSE(iter.next());
  }
  // Three uneven parts: 50 * k / 3 gives [0, 16), [16, 33), [33, 50).
  TextIter last = make_text_iter({{"path_rec", dir.file("s.rec")},
                                  {"batch_size", "1"},
                                  {"seq_len", "4"},
                                  {"num_parts", "3"},
                                  {"part_index", "1"}});
  CHECK(last.part_tokens() == 17);
  CHECK(last.batches_per_epoch() == 4);
  CHECK(last.next()->data.to_vector<float>() == range_of(16, 4));
}

TEST_CASE("TextIter: a seeded random offset per epoch, off by default") {
  TempDir dir;
  write_token_file(dir.file("s"), iota_ids(50), 64, 50);
  const std::map<std::string, std::string> params{{"path_rec", dir.file("s.rec")},
                                                  {"batch_size", "3"},
                                                  {"seq_len", "4"},
                                                  {"random_offset", "True"},
                                                  {"seed", "7"}};
  TextIter a = make_text_iter(params), b = make_text_iter(params);
  // M = 16: floor((16 - 4 + 1) / 4) = 3 batches whatever the offset.
  CHECK(a.batches_per_epoch() == 3);
  std::set<uint64_t> offsets;
  for (int epoch = 0; epoch < 12; ++epoch) {
    const uint64_t o = a.epoch_offset();
    CHECK(o < 4);
    CHECK(b.epoch_offset() == o);
    offsets.insert(o);
    std::vector<float> previous_label;
    for (size_t i = 0; i < 3; ++i) {
      auto batch = a.next();
      REQUIRE(batch);
      CHECK(row(batch->data, 2, 4) == range_of(static_cast<float>(32 + o + 4 * i), 4));
      // Each row goes on where it stopped.
      if (!previous_label.empty()) CHECK(row(batch->data, 0, 4)[0] == previous_label.back());
      previous_label = row(batch->label, 0, 4);
    }
    CHECK_FALSE(a.next());
    a.reset();
    b.reset();
  }
  CHECK(offsets.size() > 1);
  auto plain =
      make_text_iter({{"path_rec", dir.file("s.rec")}, {"batch_size", "3"}, {"seq_len", "4"}});
  plain.reset();
  CHECK(plain.epoch_offset() == 0);
}

TEST_CASE("TextIter: errors name the file; by name through the factory") {
  TempDir dir;
  write_token_file(dir.file("s"), iota_ids(20), 32, 8);
  CHECK(error_text([&] {
          make_text_iter({{"path_rec", dir.file("s.rec")}, {"batch_size", "4"}, {"seq_len", "5"}});
        }) == "TextIter '" + dir.file("s.rec") +
                  "': part 0 of 1 holds 20 tokens (of 20), so each of the batch_size 4 streams "
                  "holds 4, fewer than seq_len 5; lower batch_size or seq_len");
  // With random_offset a stream needs 2 * seq_len - 1 tokens: 3 streams of 6 are too short.
  CHECK(error_text([&] {
          make_text_iter({{"path_rec", dir.file("s.rec")},
                          {"batch_size", "3"},
                          {"seq_len", "5"},
                          {"random_offset", "True"}});
        }) == "TextIter '" + dir.file("s.rec") +
                  "': part 0 of 1 holds 20 tokens (of 20), so each of the batch_size 3 streams "
                  "holds 6, fewer than 2 * seq_len - 1 = 9 (random_offset); lower batch_size or "
                  "seq_len");
  CHECK(make_text_iter({{"path_rec", dir.file("s.rec")},
                        {"batch_size", "2"},
                        {"seq_len", "5"},
                        {"random_offset", "True"}})
            .batches_per_epoch() == 1);
  // A vocabulary smaller than the ids.
  write_bytes(dir.file("small.vocab"), "<unk>\nx\n");
  CHECK(error_text([&] {
          make_text_iter({{"path_rec", dir.file("s.rec")},
                          {"path_vocab", dir.file("small.vocab")},
                          {"batch_size", "1"}});
        }) == dir.file("s.rec") +
                  ": byte 0: token record: id 2 of document 0 is 2, outside the vocabulary's 2 "
                  "tokens");
  CHECK(error_text([&] {
          make_text_iter({{"path_rec", dir.file("none.rec")}});
        }) == dir.file("none.rec") + ": cannot open: No such file or directory");
  fs::remove(dir.file("s.vocab"));
  CHECK(error_text([&] {
          make_text_iter({{"path_rec", dir.file("s.rec")}});
        }) == "cannot open '" + dir.file("s.vocab") + "': no such file");
  CHECK(
      error_text([&] {
        make_text_iter({{"path_rec", dir.file("s.rec")}, {"num_parts", "2"}, {"part_index", "2"}});
      }) == "TextIter '" + dir.file("s.rec") + "': part_index 2 must be below num_parts 2");

  write_token_file(dir.file("f"), iota_ids(30), 32, 8);
  auto iter = create_data_iter(
      "TextIter",
      {{"path_rec", dir.file("f.rec")}, {"batch_size", "2"}, {"seq_len", "7"}, {"silent", "True"}},
      "data");
  CHECK(iter->batches_per_epoch() == 2);
  CHECK(iter->data_shape() == Shape{2, 7});
  CHECK(error_text([&] {
          check_data_iter_params("TextIter", {{"path_rec", "x.rec"}, {"seq_len", "0"}}, "data");
        }).find("seq_len") != std::string::npos);
}

TEST_CASE("inspecting a token file: documents, tokens, ids against the vocabulary") {
  TempDir dir;
  write_bytes(dir.file("t.txt"), "abc\n%\nd\n");
  PackTextOptions o;
  o.inputs = {dir.file("t.txt")};
  o.prefix = dir.file("t");
  o.record_separator = "%";
  o.record_tokens = 2;
  std::ostringstream out;
  pack_text(o, out);
  InspectOptions options;
  options.idx_path = dir.file("t.idx");
  options.vocab_size = 7;
  const InspectReport report = inspect_rec(dir.file("t.rec"), options);
  CHECK(report.ok());
  // "abc\n<eos>" in records of 2, 2 and 1 ids, "d\n<eos>" in 2 and 1.
  CHECK(report.records == 5);
  CHECK(report.token_records == 5);
  CHECK(report.documents == 2);
  CHECK(report.tokens == 8);
  CHECK(report.max_id == 6);
  options.vocab_size = 6;
  const InspectReport bad = inspect_rec(dir.file("t.rec"), options);
  CHECK_FALSE(bad.ok());
  REQUIRE(bad.bad_records.size() == 1);
  CHECK(bad.bad_records[0].find("outside the vocabulary's 6 tokens") != std::string::npos);
}
