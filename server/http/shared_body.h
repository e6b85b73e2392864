// The gateway's response body (a Boost.Beast Body): the response's own
// string, or bytes shared with others and never changed (a kept rendering
// of a cached or snapshot answer), written from where they are, without a
// copy per response.
#ifndef VIN_SERVER_HTTP_SHARED_BODY_H_
#define VIN_SERVER_HTTP_SHARED_BODY_H_

#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/optional.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace server {
namespace http {
namespace internal {

struct SharedStringBody {
  class value_type {
   public:
    value_type& operator=(std::string owned) {
      owned_ = std::move(owned);
      shared_.reset();
      return *this;
    }
    // `bytes` are sent as they are; they must not change while shared.
    void Share(std::shared_ptr<const std::string> bytes) {
      shared_ = std::move(bytes);
      owned_.clear();
    }
    void clear() {
      owned_.clear();
      shared_.reset();
    }
    absl::string_view view() const {
      return shared_ != nullptr ? absl::string_view(*shared_) : owned_;
    }
    size_t size() const { return view().size(); }

   private:
    std::string owned_;
    std::shared_ptr<const std::string> shared_;
  };

  static std::uint64_t size(const value_type& body) { return body.size(); }

  // Beast's BodyWriter: the whole body as one buffer.
  class writer {
   public:
    using const_buffers_type = boost::asio::const_buffer;
    template <bool isRequest, class Fields>
    writer(const boost::beast::http::header<isRequest, Fields>&,
           const value_type& body)
        : body_(body) {}
    void init(boost::beast::error_code& ec) { ec = {}; }
    boost::optional<std::pair<const_buffers_type, bool>> get(
        boost::beast::error_code& ec) {
      ec = {};
      const absl::string_view v = body_.view();
      return std::make_pair(const_buffers_type(v.data(), v.size()), false);
    }

   private:
    const value_type& body_;
  };
};

}  // namespace internal
}  // namespace http
}  // namespace server

#endif  // VIN_SERVER_HTTP_SHARED_BODY_H_
