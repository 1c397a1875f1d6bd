import Foundation

/// Test bodies made of a pattern, fast in a debug build.
///
/// `Data((0..<count).map { ... })` calls unspecialised generic code for every byte in a debug
/// build: about 0.7 µs a byte, two seconds for 3 MB, on a thread of the cooperative pool that
/// every other test of a parallel run waits for.
public enum PatternBytes {
    /// `count` bytes, the byte at offset `index` being `byte(index)`.
    public static func make(_ count: Int, _ byte: (Int) -> UInt8) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            var index = 0
            while index < count {
                buffer[index] = byte(index)
                index += 1
            }
        }
        return data
    }
}
