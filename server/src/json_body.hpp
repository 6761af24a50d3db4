// SPDX-License-Identifier: MIT
// src/json_body.hpp — a JSON response body (nlohmann::ordered_json) that survives running out of
// memory: building or dumping it may throw std::bad_alloc, destroying it never ends the process.
//
// Why it is needed: nlohmann::basic_json's destructor (3.11) frees a non-empty array or object
// without recursion, by moving its children into a std::vector it reserves first. The destructor
// is noexcept, so if that reserve fails the process ends (std::terminate) — on the normal path
// after a dump, or while an exception thrown half-way through building one unwinds. json_body
// empties its value from the leaves up before it is destroyed: every container is then empty
// when its destructor runs, and reserving room for no children allocates nothing.
//
//
// One rule when filling it: make each nested object or array with json::object() / json::array()
// and assign it, never by indexing a null (`v["a"]["b"] = 1`). nlohmann (3.11.2) turns a null
// into an object by setting the type first and allocating the storage second; if that allocation
// fails, the value is an object without storage, which its own destructor then dereferences.
// And an object that holds nested ones has room reserved for all its keys (reserve()): an
// ordered_json object is a std::vector of (const key, value) pairs, which grows by copying them
// (a const key cannot be moved), and a nested object copied and then dropped, when a later copy
// fails, would be destroyed by that same allocating destructor.
//
//   json_body body;                                   // an empty object
//   body.value["n"] = 10;                             // may throw std::bad_alloc
//   auto& jobs = body.value["jobs"] = json::object(); // a nested object, made whole
//   return body.dump();                               // {"n":10,"jobs":{}}
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace pools::server::detail {

class json_body {
 public:
  // ordered_json: the keys stay in the order written ({"n":15,"fib":610}); json would sort them.
  using json = nlohmann::ordered_json;

  json_body() = default;
  ~json_body() { empty(value); }
  json_body(const json_body&) = delete;
  json_body& operator=(const json_body&) = delete;

  /// Bytes that are not UTF-8 (a name from the command line) become U+FFFD, not an exception.
  std::string dump() const { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

  /// Room for `keys` keys in the top-level object: adding them then never moves the others.
  void reserve(std::size_t keys) { value.get_ptr<json::object_t*>()->reserve(keys); }

  json value = json::object();

 private:
  // Children first, then the container: clear() frees without allocating once every child is a
  // scalar or empty. (get_ptr: the container, or nullptr when j is not one.)
  static void empty(json& j) noexcept {
    if (auto* object = j.get_ptr<json::object_t*>()) {
      for (auto& member : *object) empty(member.second);
      object->clear();
    } else if (auto* array = j.get_ptr<json::array_t*>()) {
      for (json& element : *array) empty(element);
      array->clear();
    }
  }
};

}  // namespace pools::server::detail
