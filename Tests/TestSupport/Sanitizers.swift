import Glibc

/// Which sanitizer this process was built with. The test bundle and the telwatch binaries it
/// runs come from one build, so the answer also holds for every telwatch a test starts.
public enum Sanitizers {
    /// True in an AddressSanitizer build (`swift build --sanitize address`): its runtime exports
    /// `__asan_init` (looked up in the global scope: RTLD_DEFAULT is null). Memory figures mean nothing there (freed memory waits in ASan's quarantine,
    /// every allocation carries red zones) and code runs a few times slower.
    public static let addressSanitizer: Bool = dlsym(nil, "__asan_init") != nil
}
