// The remote protocol's authentication: HMAC-SHA-256 challenge-response by OpenSSL's libcrypto, nonces, shared-secret files.
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <climits>
#include <cstring>

#include "tessera/runtime/remote_wire.h"
#include "tessera/support/error.h"
#include "tessera/support/file_io.h"

namespace tessera::runtime::remote::wire {

namespace {

// libcrypto's reason for the last failure on this thread.
std::string cryptoError() {
  char text[256] = "no reason given";
  if (const unsigned long code = ERR_get_error()) ERR_error_string_n(code, text, sizeof text);
  return text;
}

}  // namespace

std::array<uint8_t, kMacBytes> hmacSha256(const std::string& key, const std::vector<uint8_t>& message) {
  if (key.size() > static_cast<size_t>(INT_MAX)) throw Error("HMAC-SHA-256", "the key is longer than libcrypto takes");
  std::array<uint8_t, kMacBytes> mac{};
  unsigned int length = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), message.data(), message.size(), mac.data(),
            &length) ||
      length != mac.size())
    throw Error("HMAC-SHA-256", "libcrypto failed: " + cryptoError());
  return mac;
}

bool equalConstantTime(const uint8_t* a, const uint8_t* b, size_t n) { return CRYPTO_memcmp(a, b, n) == 0; }

std::array<uint8_t, kNonceBytes> randomNonce() {
  std::array<uint8_t, kNonceBytes> nonce;
  if (RAND_bytes(nonce.data(), static_cast<int>(nonce.size())) != 1)
    throw Error("a nonce for the handshake", "libcrypto's random generator failed: " + cryptoError());
  return nonce;
}

std::string readSecretFile(const std::string& path, const std::string& what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) throw Error(what + " " + path, "cannot open file for reading");
  if (st.st_mode & (S_IRWXG | S_IRWXO))
    throw Error(what + " " + path, "readable by group or others; the secret must be private (chmod 600)");
  std::string secret;
  try {
    secret = readTextFile(path);
  } catch (const Error& e) {
    throw Error(what + " " + path, e.reason());
  }
  while (!secret.empty() && (secret.back() == '\n' || secret.back() == '\r')) secret.pop_back();
  if (secret.empty()) throw Error(what + " " + path, "empty: a shared secret needs at least one byte");
  return secret;
}

std::vector<uint8_t> authMessage(const char* label, const uint8_t* serverNonce, const uint8_t* clientNonce) {
  std::vector<uint8_t> m(label, label + std::strlen(label));
  m.insert(m.end(), serverNonce, serverNonce + kNonceBytes);
  m.insert(m.end(), clientNonce, clientNonce + kNonceBytes);
  return m;
}

}  // namespace tessera::runtime::remote::wire
