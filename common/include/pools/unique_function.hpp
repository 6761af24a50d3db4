// SPDX-License-Identifier: MIT
// pools/unique_function.hpp — a move-only, type-erased callable with a small buffer.
//
// Why not std::function: it requires copyable targets, so a task owning a std::promise or a
// std::unique_ptr cannot be stored. C++23 adds std::move_only_function; C++20 has nothing, so
// every pool in this repository queues pools::unique_function<void()>.
//
// Why a small buffer: a pool's hot path is "wrap a lambda, queue it, run it". Lambdas that
// capture up to three pointers (the common case) live inside the object, so posting them does
// not call the allocator. Larger or throwing-move callables go to the heap, which keeps the
// move of a unique_function noexcept (queues rely on that when they grow).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace pools {

template <class Signature>
class unique_function;

template <class R, class... Args>
class unique_function<R(Args...)> {
 public:
  /// Bytes a callable may occupy and still be stored without allocation.
  static constexpr std::size_t small_buffer_size = 3 * sizeof(void*);

  // storage_ stays raw bytes until a callable is constructed in it (zeroing it would cost every task).
  unique_function() noexcept = default;  // NOLINT(cppcoreguidelines-pro-type-member-init)
  unique_function(std::nullptr_t) noexcept {}

  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, unique_function> &&
             std::is_constructible_v<std::decay_t<F>, F> &&
             std::is_invocable_r_v<R, std::decay_t<F>&, Args...>)
  unique_function(F&& f) {  // NOLINT(google-explicit-constructor): implicit, like std::function
    using T = std::decay_t<F>;
    if constexpr (stored_inline<T>) {
      ::new (static_cast<void*>(&storage_)) T(std::forward<F>(f));
      vtable_ = &inline_vtable<T>;
    } else {
      ::new (static_cast<void*>(&storage_)) T*(new T(std::forward<F>(f)));
      vtable_ = &heap_vtable<T>;
    }
  }

  unique_function(unique_function&& other) noexcept : vtable_(other.vtable_) {
    if (vtable_ != nullptr) {
      vtable_->relocate(&other.storage_, &storage_);
      other.vtable_ = nullptr;
    }
  }

  unique_function& operator=(unique_function&& other) noexcept {
    if (this != &other) {
      reset();
      if (other.vtable_ != nullptr) {
        other.vtable_->relocate(&other.storage_, &storage_);
        vtable_ = std::exchange(other.vtable_, nullptr);
      }
    }
    return *this;
  }

  unique_function& operator=(std::nullptr_t) noexcept {
    reset();
    return *this;
  }

  unique_function(const unique_function&) = delete;
  unique_function& operator=(const unique_function&) = delete;

  ~unique_function() { reset(); }

  explicit operator bool() const noexcept { return vtable_ != nullptr; }

  /// Calls the target. Throws std::bad_function_call when empty (one predictable branch).
  /// Args by value, as the signature R(Args...) says (std::function's too): each is forwarded on.
  // NOLINTNEXTLINE(performance-unnecessary-value-param): a by-value Args is moved, not read
  R operator()(Args... args) {
    if (vtable_ == nullptr) throw std::bad_function_call();
    return vtable_->invoke(&storage_, std::forward<Args>(args)...);
  }

  void swap(unique_function& other) noexcept { std::swap(*this, other); }

 private:
  struct vtable_t {
    R (*invoke)(void*, Args&&...);
    // Move-construct into `to` and destroy `from`: one indirect call per move instead of two.
    void (*relocate)(void* from, void* to) noexcept;
    void (*destroy)(void*) noexcept;
  };

  struct alignas(void*) storage_t {
    std::byte bytes[small_buffer_size];
  };

  template <class T>
  static constexpr bool stored_inline = sizeof(T) <= small_buffer_size && alignof(void*) % alignof(T) == 0 &&
                                        std::is_nothrow_move_constructible_v<T>;

  template <class T>
  static constexpr vtable_t inline_vtable{
      [](void* s, Args&&... a) -> R { return std::invoke(*static_cast<T*>(s), std::forward<Args>(a)...); },
      [](void* from, void* to) noexcept {
        ::new (to) T(std::move(*static_cast<T*>(from)));
        static_cast<T*>(from)->~T();
      },
      [](void* s) noexcept { static_cast<T*>(s)->~T(); },
  };

  template <class T>
  static constexpr vtable_t heap_vtable{
      [](void* s, Args&&... a) -> R { return std::invoke(**static_cast<T**>(s), std::forward<Args>(a)...); },
      [](void* from, void* to) noexcept { ::new (to) T*(*static_cast<T**>(from)); },
      [](void* s) noexcept { delete *static_cast<T**>(s); },
  };

  void reset() noexcept {
    if (vtable_ != nullptr) std::exchange(vtable_, nullptr)->destroy(&storage_);
  }

  storage_t storage_;
  const vtable_t* vtable_ = nullptr;
};

/// The task type every pool in this repository queues.
using task_function = unique_function<void()>;

}  // namespace pools
