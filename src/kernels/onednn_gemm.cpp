// With TRAINPLAN_HAVE_ONEDNN: a dnnl::matmul over user memory (no copies), the
// transposes given as strides (format tag ba). Without: a refusal in one line.
#include "kernels/onednn_gemm.h"

#include <stdexcept>

#ifdef TRAINPLAN_HAVE_ONEDNN
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

namespace trainplan::kernels {

#ifdef TRAINPLAN_HAVE_ONEDNN

bool onednn_built() { return true; }

struct OnednnGemm::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::memory::desc a, b, c;
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul primitive;
};

namespace {
// A rows x cols BF16 matrix stored row-major with leading dimension ld, or its transpose.
dnnl::memory::desc matrix(long rows, long cols, long ld, bool transposed) {
  using dims = dnnl::memory::dims;
  return {dims{rows, cols}, dnnl::memory::data_type::bf16, transposed ? dims{1, ld} : dims{ld, 1}};
}
}  // namespace

OnednnGemm::OnednnGemm(Trans ta, Trans tb, long m, long n, long k, long lda, long ldb, long ldc)
    : impl_(std::make_unique<Impl>()) {
  impl_->a = matrix(m, k, lda, ta == Trans::yes);
  impl_->b = matrix(k, n, ldb, tb == Trans::yes);
  impl_->c = matrix(m, n, ldc, false);
  try {
    impl_->pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(impl_->a, impl_->b, impl_->c), impl_->engine);
    impl_->primitive = dnnl::matmul(impl_->pd);
  } catch (const dnnl::error& e) {
    throw std::runtime_error(std::string("oneDNN offers no BF16 matmul on this CPU (") + e.what() + ")");
  }
}

OnednnGemm::~OnednnGemm() = default;

void OnednnGemm::run(const bf16* a, const bf16* b, bf16* c, int threads) const {
  if (threads > 0) omp_set_num_threads(threads);
  dnnl::stream stream(impl_->engine);
  dnnl::memory ma(impl_->a, impl_->engine, const_cast<bf16*>(a)), mb(impl_->b, impl_->engine, const_cast<bf16*>(b));
  dnnl::memory mc(impl_->c, impl_->engine, c);
  impl_->primitive.execute(stream, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
  stream.wait();
}

std::string OnednnGemm::implementation() const { return impl_->pd.impl_info_str(); }

std::string onednn_bf16_unavailable() {
  try {
    const OnednnGemm probe(Trans::no, Trans::no, 64, 64, 64, 64, 64, 64);
    if (!probe.native()) return "oneDNN has only reference code for a BF16 matmul on this CPU (" + probe.implementation() + ")";
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

#else

bool onednn_built() { return false; }

struct OnednnGemm::Impl {};

OnednnGemm::OnednnGemm(Trans, Trans, long, long, long, long, long, long) {
  throw std::runtime_error("trainplan was built without oneDNN (install the Debian package libdnnl-dev and "
                           "reconfigure with -DTRAINPLAN_ONEDNN=ON)");
}
OnednnGemm::~OnednnGemm() = default;
void OnednnGemm::run(const bf16*, const bf16*, bf16*, int) const {}
std::string OnednnGemm::implementation() const { return "none"; }

std::string onednn_bf16_unavailable() { return "oneDNN is not in this build"; }

#endif

}  // namespace trainplan::kernels
