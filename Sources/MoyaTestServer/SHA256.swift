import Foundation

/// A small, dependency-free SHA-256 implementation (FIPS 180-4).
///
/// Feed data incrementally with `update`, then call ``finalize()`` once to obtain the 32-byte
/// digest. Full 64-byte blocks are compressed straight out of the caller's buffer, so hashing
/// large inputs does not allocate per byte.
///
/// ```swift
/// var hasher = SHA256()
/// hasher.update(Data("abc".utf8))
/// let hex = SHA256.hex(hasher.finalize())
/// ```
public struct SHA256: Sendable {
    /// The intermediate hash value H0...H7.
    private var state = HashState()
    /// Bytes not yet forming a complete 64-byte block (always fewer than 64).
    private var pending: [UInt8]
    /// The total number of bytes fed so far.
    private var totalLength: UInt64 = 0

    /// The size of one SHA-256 input block in bytes.
    public static let blockSize = 64
    /// The size of a SHA-256 digest in bytes.
    public static let digestSize = 32

    /// Creates a hasher with the standard SHA-256 initial state.
    public init() {
        self.pending = []
        self.pending.reserveCapacity(SHA256.blockSize)
    }

    /// Feeds raw bytes into the hash.
    public mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        self.totalLength &+= UInt64(bytes.count)
        var input = bytes[...]

        if !self.pending.isEmpty {
            let take = min(SHA256.blockSize - self.pending.count, input.count)
            self.pending.append(contentsOf: input.prefix(take))
            input = input.dropFirst(take)
            if self.pending.count == SHA256.blockSize {
                self.pending.withUnsafeBytes { self.state.compress($0) }
                self.pending.removeAll(keepingCapacity: true)
            }
        }

        let fullBlocksLength = input.count / SHA256.blockSize * SHA256.blockSize
        if fullBlocksLength > 0 {
            let start = input.startIndex
            self.state.compress(UnsafeRawBufferPointer(rebasing: input[start..<(start + fullBlocksLength)]))
            input = input.dropFirst(fullBlocksLength)
        }
        if !input.isEmpty {
            self.pending.append(contentsOf: input)
        }
    }

    /// Feeds the bytes of `data` into the hash.
    public mutating func update(_ data: Data) {
        data.withUnsafeBytes { self.update($0) }
    }

    /// Feeds a sequence of bytes (e.g. `[UInt8]`, `ArraySlice<UInt8>`, `String.UTF8View`) into the hash.
    public mutating func update(_ bytes: some Sequence<UInt8>) {
        let handled: Void? = bytes.withContiguousStorageIfAvailable { self.update(UnsafeRawBufferPointer($0)) }
        if handled != nil { return }
        var buffer: [UInt8] = []
        buffer.reserveCapacity(4096)
        for byte in bytes {
            buffer.append(byte)
            if buffer.count == 4096 {
                buffer.withUnsafeBytes { self.update($0) }
                buffer.removeAll(keepingCapacity: true)
            }
        }
        buffer.withUnsafeBytes { self.update($0) }
    }

    /// Completes the computation and returns the 32-byte digest.
    ///
    /// Call this once; the hasher should not be updated afterwards.
    public mutating func finalize() -> [UInt8] {
        let bitLength = self.totalLength &* 8
        var padding: [UInt8] = [0x80]
        let afterMarker = (self.pending.count + 1) % SHA256.blockSize
        let zeros = afterMarker <= 56 ? 56 - afterMarker : 64 + 56 - afterMarker
        padding.append(contentsOf: repeatElement(0, count: zeros))
        for shift in stride(from: 56, through: 0, by: -8) {
            padding.append(UInt8(truncatingIfNeeded: bitLength >> UInt64(shift)))
        }
        let savedLength = self.totalLength
        padding.withUnsafeBytes { self.update($0) }
        self.totalLength = savedLength
        precondition(self.pending.isEmpty, "SHA256 padding must end on a block boundary")
        return self.state.digest
    }

    /// Completes the computation and returns the digest as a lowercase hexadecimal string.
    ///
    /// Call this once; the hasher should not be updated afterwards.
    public mutating func finalizeHex() -> String {
        SHA256.hex(self.finalize())
    }

    /// The SHA-256 digest of `data`.
    public static func hash(_ data: Data) -> [UInt8] {
        var hasher = SHA256()
        hasher.update(data)
        return hasher.finalize()
    }

    /// The SHA-256 digest of `data` as a lowercase hexadecimal string.
    public static func hexDigest(_ data: Data) -> String {
        self.hex(self.hash(data))
    }

    /// The SHA-256 digest of the file at `url` as a lowercase hexadecimal string.
    ///
    /// The file is read in 1 MiB pieces, so arbitrarily large files can be hashed.
    public static func hexDigest(ofFileAt url: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var hasher = SHA256()
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty {
            hasher.update(chunk)
        }
        return self.hex(hasher.finalize())
    }

    /// Formats bytes as a lowercase hexadecimal string.
    public static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits: [Character] = Array("0123456789abcdef")
        var result = ""
        for byte in bytes {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0F)])
        }
        return result
    }
}

extension SHA256 {
    /// The eight 32-bit words of SHA-256's working state plus the compression function.
    fileprivate struct HashState: Sendable {
        var h0: UInt32 = 0x6a09_e667
        var h1: UInt32 = 0xbb67_ae85
        var h2: UInt32 = 0x3c6e_f372
        var h3: UInt32 = 0xa54f_f53a
        var h4: UInt32 = 0x510e_527f
        var h5: UInt32 = 0x9b05_688c
        var h6: UInt32 = 0x1f83_d9ab
        var h7: UInt32 = 0x5be0_cd19

        /// The big-endian serialisation of the state.
        var digest: [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(SHA256.digestSize)
            for word in [h0, h1, h2, h3, h4, h5, h6, h7] {
                out.append(UInt8(truncatingIfNeeded: word >> 24))
                out.append(UInt8(truncatingIfNeeded: word >> 16))
                out.append(UInt8(truncatingIfNeeded: word >> 8))
                out.append(UInt8(truncatingIfNeeded: word))
            }
            return out
        }

        /// Compresses every complete 64-byte block of `blocks` into the state.
        mutating func compress(_ blocks: UnsafeRawBufferPointer) {
            precondition(blocks.count % SHA256.blockSize == 0)
            guard let base = blocks.baseAddress, blocks.count > 0 else { return }
            SHA256.roundConstants.withUnsafeBufferPointer { k in
                withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 64) { w in
                    var offset = 0
                    while offset < blocks.count {
                        self.compressBlock(base + offset, k: k.baseAddress!, w: w.baseAddress!)
                        offset += SHA256.blockSize
                    }
                }
            }
        }

        // Written with plain pointers, `while` loops and inline rotations so that even
        // unoptimised (debug) builds hash at a usable speed.
        private mutating func compressBlock(
            _ block: UnsafeRawPointer,
            k: UnsafePointer<UInt32>,
            w: UnsafeMutablePointer<UInt32>
        ) {
            var i = 0
            while i < 16 {
                w[i] = UInt32(bigEndian: block.loadUnaligned(fromByteOffset: i &* 4, as: UInt32.self))
                i &+= 1
            }
            while i < 64 {
                let x = w[i &- 15]
                let y = w[i &- 2]
                let s0 = (x &>> 7 | x &<< 25) ^ (x &>> 18 | x &<< 14) ^ (x &>> 3)
                let s1 = (y &>> 17 | y &<< 15) ^ (y &>> 19 | y &<< 13) ^ (y &>> 10)
                w[i] = w[i &- 16] &+ s0 &+ w[i &- 7] &+ s1
                i &+= 1
            }

            var a = self.h0
            var b = self.h1
            var c = self.h2
            var d = self.h3
            var e = self.h4
            var f = self.h5
            var g = self.h6
            var h = self.h7

            i = 0
            while i < 64 {
                let bigS1 = (e &>> 6 | e &<< 26) ^ (e &>> 11 | e &<< 21) ^ (e &>> 25 | e &<< 7)
                let choice = (e & f) ^ (~e & g)
                let temp1 = h &+ bigS1 &+ choice &+ k[i] &+ w[i]
                let bigS0 = (a &>> 2 | a &<< 30) ^ (a &>> 13 | a &<< 19) ^ (a &>> 22 | a &<< 10)
                let majority = (a & b) ^ (a & c) ^ (b & c)
                let temp2 = bigS0 &+ majority
                h = g
                g = f
                f = e
                e = d &+ temp1
                d = c
                c = b
                b = a
                a = temp1 &+ temp2
                i &+= 1
            }

            self.h0 &+= a
            self.h1 &+= b
            self.h2 &+= c
            self.h3 &+= d
            self.h4 &+= e
            self.h5 &+= f
            self.h6 &+= g
            self.h7 &+= h
        }
    }

    /// The SHA-256 round constants K0...K63.
    fileprivate static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]
}
