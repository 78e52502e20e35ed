// std::vector whose storage starts on a 64-byte cache line, as a framework's tensors do
// (PyTorch's CPU allocator aligns to c10::gAlignment = 64, pytorch/pytorch
// c10/core/alignment.h): what the calibration and the kernel benchmark time the kernels on,
// so a figure does not depend on where the heap happened to place a buffer.
#pragma once
#include <cstddef>
#include <new>
#include <vector>

namespace trainplan::kernels {

template <class T>
struct LineAligned {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  LineAligned() = default;
  template <class U>
  LineAligned(const LineAligned<U>&) {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) { ::operator delete(p, kAlign); }
  template <class U>
  bool operator==(const LineAligned<U>&) const { return true; }
};

template <class T>
using AlignedVector = std::vector<T, LineAligned<T>>;

}  // namespace trainplan::kernels
