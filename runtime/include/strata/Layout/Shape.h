//===- Shape.h - sizes, strides or dims, four of them held inline -*- C++
//-*-===//
//
// A tensor's sizes and strides were std::vector<int64_t>: recording one
// elementwise op copied a dozen of them (its operands' layouts, its
// result's), one malloc each. Shape keeps up to four elements inline (rank
// 4: every layout the models and tests here use but a few) and spills to
// the heap beyond. Every recorded node and operand holds two or three, so
// its size is the trace's: 48 bytes (six inline and 64-bit counts made it
// 72; docs/performance.md, "Smaller nodes", has what it saved). It is
// std::vector<int64_t>'s interface as strata and its users use it: sizes(),
// operator[], iterators, braced lists, comparisons, and conversions from
// and to std::vector<int64_t>.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_LAYOUT_SHAPE_H
#define STRATA_LAYOUT_SHAPE_H

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace strata::layout {

/// Sizes, strides or dims: a vector of int64_t with four elements inline.
class Shape {
  template <typename T> struct IsSpan : std::false_type {};
  template <typename T, size_t N>
  struct IsSpan<std::span<T, N>> : std::true_type {};

public:
  /// std::vector's member type.
  using value_type = int64_t;
  /// std::vector's member type.
  using size_type = size_t;
  /// std::vector's member type.
  using difference_type = ptrdiff_t;
  /// std::vector's member type.
  using reference = int64_t &;
  /// std::vector's member type.
  using const_reference = const int64_t &;
  /// std::vector's member type.
  using pointer = int64_t *;
  /// std::vector's member type.
  using const_pointer = const int64_t *;
  /// std::vector's member type.
  using iterator = int64_t *;
  /// std::vector's member type.
  using const_iterator = const int64_t *;
  /// std::vector's member type.
  using reverse_iterator = std::reverse_iterator<iterator>;
  /// std::vector's member type.
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;
  /// Elements held without a heap allocation.
  static constexpr size_t kInline = 4;

  /// Empty.
  Shape() noexcept = default;
  /// `n` zeros.
  explicit Shape(size_t n) { assign(n, 0); }
  /// `n` copies of `v`.
  Shape(size_t n, int64_t v) { assign(n, v); }
  /// The listed elements.
  Shape(std::initializer_list<int64_t> l) { assign(l.begin(), l.end()); }
  /// The elements of [first, last).
  template <typename It,
            typename = typename std::iterator_traits<It>::iterator_category>
  Shape(It first, It last) {
    assign(first, last);
  }
  /// The elements of a std::vector (implicit: code written for
  /// std::vector<int64_t> keeps working).
  Shape(const std::vector<int64_t> &v) { assign(v.begin(), v.end()); }
  /// A copy.
  Shape(const Shape &o) { assign(o.begin(), o.end()); }
  /// Takes the elements of `o`, leaving it empty.
  Shape(Shape &&o) noexcept { steal(o); }
  /// Copies `o`.
  Shape &operator=(const Shape &o) {
    if (this != &o)
      assign(o.begin(), o.end());
    return *this;
  }
  /// Takes the elements of `o`, leaving it empty.
  Shape &operator=(Shape &&o) noexcept {
    if (this != &o) {
      release();
      steal(o);
    }
    return *this;
  }
  /// The listed elements.
  Shape &operator=(std::initializer_list<int64_t> l) {
    assign(l.begin(), l.end());
    return *this;
  }
  /// Frees a heap block.
  ~Shape() { release(); }

  /// A std::vector with the same elements.
  operator std::vector<int64_t>() const { return {begin(), end()}; }
  /// A read-only view of the elements for any view type made of (pointer,
  /// length) -- llvm::ArrayRef<int64_t>, which this LLVM-free header cannot
  /// name -- as std::vector<int64_t> converts to one. (std::span takes a
  /// Shape by its own range constructor.)
  template <typename View,
            typename = std::enable_if_t<
                std::is_constructible_v<View, const int64_t *, size_t> &&
                !IsSpan<View>::value>>
  operator View() const {
    return View(data_, size_);
  }

  /// The number of elements.
  size_t size() const { return size_; }
  /// No elements.
  bool empty() const { return size_ == 0; }
  /// Elements held without growing.
  size_t capacity() const { return capacity_; }
  /// The first element.
  int64_t *data() { return data_; }
  /// The first element.
  const int64_t *data() const { return data_; }
  /// Element `i` (unchecked).
  int64_t &operator[](size_t i) { return data_[i]; }
  /// Element `i` (unchecked).
  const int64_t &operator[](size_t i) const { return data_[i]; }
  /// Element `i`; throws std::out_of_range past the end.
  int64_t &at(size_t i) {
    if (i >= size_)
      throw std::out_of_range("strata::layout::Shape::at");
    return data_[i];
  }
  /// Element `i`; throws std::out_of_range past the end.
  const int64_t &at(size_t i) const { return const_cast<Shape *>(this)->at(i); }
  /// The first element.
  int64_t &front() { return data_[0]; }
  /// The first element.
  const int64_t &front() const { return data_[0]; }
  /// The last element.
  int64_t &back() { return data_[size_ - 1]; }
  /// The last element.
  const int64_t &back() const { return data_[size_ - 1]; }

  /// The first element.
  iterator begin() { return data_; }
  /// Past the last element.
  iterator end() { return data_ + size_; }
  /// The first element.
  const_iterator begin() const { return data_; }
  /// Past the last element.
  const_iterator end() const { return data_ + size_; }
  /// The first element.
  const_iterator cbegin() const { return data_; }
  /// Past the last element.
  const_iterator cend() const { return data_ + size_; }
  /// The last element, backwards.
  reverse_iterator rbegin() { return reverse_iterator(end()); }
  /// Before the first element, backwards.
  reverse_iterator rend() { return reverse_iterator(begin()); }
  /// The last element, backwards.
  const_reverse_iterator rbegin() const {
    return const_reverse_iterator(end());
  }
  /// Before the first element, backwards.
  const_reverse_iterator rend() const {
    return const_reverse_iterator(begin());
  }

  /// Room for `n` elements.
  void reserve(size_t n) {
    if (n > capacity_)
      grow(n);
  }
  /// No elements (the heap block, if any, is kept).
  void clear() { size_ = 0; }
  /// Appends `v`.
  void push_back(int64_t v) {
    if (size_ == capacity_)
      grow(2 * static_cast<size_t>(capacity_));
    data_[size_++] = v;
  }
  /// Appends `v`; returns it.
  int64_t &emplace_back(int64_t v) {
    push_back(v);
    return back();
  }
  /// Removes the last element.
  void pop_back() { --size_; }
  /// `n` elements, new ones `v`.
  void resize(size_t n, int64_t v = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i)
      data_[i] = v;
    size_ = static_cast<uint32_t>(n);
  }
  /// `n` copies of `v`.
  void assign(size_t n, int64_t v) {
    clear();
    resize(n, v);
  }
  /// The elements of [first, last).
  template <typename It> void assign(It first, It last) {
    clear();
    if constexpr (std::is_base_of_v<
                      std::forward_iterator_tag,
                      typename std::iterator_traits<It>::iterator_category>) {
      reserve(static_cast<size_t>(std::distance(first, last)));
      for (; first != last; ++first)
        data_[size_++] = static_cast<int64_t>(*first);
    } else {
      for (; first != last; ++first)
        push_back(static_cast<int64_t>(*first));
    }
  }
  /// The listed elements.
  void assign(std::initializer_list<int64_t> l) { assign(l.begin(), l.end()); }
  /// Inserts `v` before `pos`; returns the inserted element.
  iterator insert(const_iterator pos, int64_t v) { return insert(pos, 1, v); }
  /// Inserts `n` copies of `v` before `pos`.
  iterator insert(const_iterator pos, size_t n, int64_t v) {
    size_t at = static_cast<size_t>(pos - data_);
    reserve(size_ + n);
    std::move_backward(data_ + at, data_ + size_, data_ + size_ + n);
    std::fill(data_ + at, data_ + at + n, v);
    size_ += static_cast<uint32_t>(n);
    return data_ + at;
  }
  /// Inserts [first, last) before `pos` (not a range of this shape).
  template <typename It,
            typename = typename std::iterator_traits<It>::iterator_category>
  iterator insert(const_iterator pos, It first, It last) {
    size_t at = static_cast<size_t>(pos - data_);
    Shape tail(begin() + at, end());
    size_ = static_cast<uint32_t>(at);
    for (; first != last; ++first)
      push_back(static_cast<int64_t>(*first));
    for (int64_t v : tail)
      push_back(v);
    return data_ + at;
  }
  /// Inserts the listed elements before `pos`.
  iterator insert(const_iterator pos, std::initializer_list<int64_t> l) {
    return insert(pos, l.begin(), l.end());
  }
  /// Removes the element at `pos`.
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  /// Removes [first, last).
  iterator erase(const_iterator first, const_iterator last) {
    int64_t *f = data_ + (first - data_), *l = data_ + (last - data_);
    std::move(l, end(), f);
    size_ -= static_cast<uint32_t>(l - f);
    return f;
  }
  /// Exchanges the elements with `o`.
  void swap(Shape &o) noexcept {
    Shape t(std::move(o));
    o = std::move(*this);
    *this = std::move(t);
  }

  friend bool operator==(const Shape &a, const Shape &b) {
    return a.size_ == b.size_ &&
           (a.size_ == 0 ||
            std::memcmp(a.data_, b.data_, a.size_ * sizeof(int64_t)) == 0);
  }
  friend std::strong_ordering operator<=>(const Shape &a, const Shape &b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(),
                                                  b.end());
  }

private:
  bool onHeap() const { return data_ != inline_; }
  void release() {
    if (onHeap())
      delete[] data_;
    data_ = inline_;
    size_ = 0;
    capacity_ = kInline;
  }
  void grow(size_t n) {
    n = std::max(n, kInline);
    if (n > UINT32_MAX)
      throw std::length_error("strata::layout::Shape: too many elements");
    auto *p = new int64_t[n];
    std::copy(data_, data_ + size_, p);
    if (onHeap())
      delete[] data_;
    data_ = p;
    capacity_ = static_cast<uint32_t>(n);
  }
  /// Takes `o`'s elements (its heap block, or a copy of its inline ones),
  /// leaving it empty. `this` holds nothing.
  void steal(Shape &o) {
    if (o.onHeap()) {
      data_ = o.data_;
      capacity_ = o.capacity_;
    } else {
      std::copy(o.inline_, o.inline_ + o.size_, inline_);
    }
    size_ = o.size_;
    o.data_ = o.inline_;
    o.size_ = 0;
    o.capacity_ = kInline;
  }

  // (32-bit counts: 64 bytes, not 72. Every node and operand of a
  // recorded program holds two or three shapes.)
  int64_t *data_ = inline_;
  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
  int64_t inline_[kInline];
};

} // namespace strata::layout

#endif // STRATA_LAYOUT_SHAPE_H
