import NIOWebSocket

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The masking keys of the frames a conversation sends: RFC 6455 (section 5.3) asks for a fresh
/// key per frame from a strong source of entropy, one the server cannot predict. They come from
/// the operating system's generator, as `WebSocketMaskingKey.random()`'s do, but 64 at a time.
///
/// `random()` asks the kernel for each key (a `getrandom` system call per frame): with 1 KiB
/// messages that call was about 3 % of the client's CPU. Here one read of 512 bytes serves 64
/// frames; the bytes are used once each and never leave the conversation (which owns this value
/// on its event loop).
struct WebSocketMaskingKeys: RandomNumberGenerator {
    /// Keys per refill (each takes one 64-bit value).
    private static let batch = 64

    private var values: [UInt64] = []
    private var index = 0

    init() {}

    /// The next frame's key.
    mutating func nextKey() -> WebSocketMaskingKey {
        .random(using: &self)
    }

    /// The next 64 random bits, for `WebSocketMaskingKey.random(using:)`.
    mutating func next() -> UInt64 {
        if index == values.count {
            values = Self.systemRandom(count: Self.batch)
            index = 0
        }
        defer { index += 1 }
        return values[index]
    }

    /// `count` values from the operating system's generator, in one read where it can.
    static func systemRandom(count: Int) -> [UInt64] {
        var values = [UInt64](repeating: 0, count: count)
        #if canImport(Darwin)
        values.withUnsafeMutableBytes { arc4random_buf($0.baseAddress!, $0.count) }
        #else
        let complete = values.withUnsafeMutableBytes { bytes in
            SystemEntropy.read(into: bytes)
        }
        if !complete {
            // No /dev/urandom (a bare chroot): the standard library's generator, which asks the
            // kernel for each value.
            var generator = SystemRandomNumberGenerator()
            for index in values.indices { values[index] = generator.next() }
        }
        #endif
        return values
    }
}

#if !canImport(Darwin)
/// The kernel's generator as a file, opened once per process and read by any thread (reads of
/// `/dev/urandom` are independent of each other; it blocks only before the kernel has gathered
/// its first entropy at boot, as `getrandom` would).
private enum SystemEntropy {
    /// The open descriptor, or -1 when it could not be opened.
    static let descriptor: Int32 = open("/dev/urandom", O_RDONLY | O_CLOEXEC)

    /// Fills `bytes` whole; `false` when the file cannot be read.
    static func read(into bytes: UnsafeMutableRawBufferPointer) -> Bool {
        guard descriptor >= 0, let base = bytes.baseAddress else { return false }
        var filled = 0
        while filled < bytes.count {
            #if canImport(Glibc)
            let result = Glibc.read(descriptor, base + filled, bytes.count - filled)
            #else
            let result = Musl.read(descriptor, base + filled, bytes.count - filled)
            #endif
            if result > 0 {
                filled += result
            } else if result < 0, errno == EINTR {
                continue
            } else {
                return false
            }
        }
        return true
    }
}
#endif
