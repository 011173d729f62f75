// A small JSON reader and writer for file headers (safetensors). Objects keep their key order and
// reject duplicate keys; numbers keep their text so integers up to 2^64 - 1 read exactly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ember::io::json {

struct Member;

struct Value {
  enum class Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Kind::Null;
  bool boolean = false;
  std::string text;  // a string's decoded value, or a number's literal
  std::vector<Value> array;
  std::vector<Member> object;  // Member, not std::pair: clang 14 needs Value complete for a pair

  bool is_object() const { return kind == Kind::Object; }
  bool is_array() const { return kind == Kind::Array; }
  bool is_string() const { return kind == Kind::String; }
  bool is_number() const { return kind == Kind::Number; }
  // The value of a number that is a non-negative integer below 2^64; nullopt otherwise.
  std::optional<uint64_t> as_uint64() const;
  // The member named key of an object, or nullptr.
  const Value* find(std::string_view key) const;
};

// An object's member: its key and value.
struct Member {
  std::string first;
  Value second;
};

// Bounds on what one document may hold, so that a hostile header cannot make the parser allocate
// far more than its own size (a Value is about 90 bytes, its text can be 2). Values counts every
// value (members, array elements, the root).
struct Limits {
  size_t max_values = size_t{1} << 23;  // 8,388,608: under 1 GB of parse tree
  size_t max_keys = size_t{1} << 22;    // 4,194,304 object members in all
};

// Parses one JSON document (surrounding whitespace allowed) in time linear in its size (duplicate
// keys are found by sorting each object's keys once, O(n log n) in its member count). Throws
// std::invalid_argument with the problem and its byte offset: "expected ',' or '}' at byte 17",
// "duplicate key 'a' at byte 9", "more than 4194304 keys at byte 99".
Value parse(std::string_view text, const Limits& limits = {});

// Appends s as a JSON string literal, escaped as serde_json does ('"', '\\', \b \f \n \r \t,
// other control characters as \u00xx; everything else, UTF-8 included, verbatim).
void append_string(std::string& out, std::string_view s);

// A short description of a value's type, for errors ("an array", "a number").
const char* kind_name(Value::Kind k);

}  // namespace ember::io::json
