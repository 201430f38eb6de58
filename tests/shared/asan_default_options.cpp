// Linked into the test programs of AddressSanitizer builds: an allocation no
// machine can satisfy fails as it does unsanitized (std::bad_alloc, or null
// from a nothrow new) instead of ending the test, so the tests of nxrt's
// out-of-memory errors run there too.
extern "C" const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}
