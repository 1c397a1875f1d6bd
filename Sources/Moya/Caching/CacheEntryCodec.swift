import Foundation

/// The file format of the responses stored for one URL on disk (its ``CachedVariants``).
///
/// A 24-byte header, then the payload:
///
/// | Bytes | Holds |
/// |---|---|
/// | 4 | the magic `MYHC` |
/// | 2 | the format version, 2 (big-endian, like every number here) |
/// | 2 | zero (reserved) |
/// | 8 | the payload's length |
/// | 8 | the payload's FNV-1a 64-bit hash |
///
/// The payload: the key, the count of variants (4 bytes), then for each variant, the oldest
/// first: the URL, the status (4), the request and response times (the bits of two `Double`s),
/// the header count (4) and each name and value, the count of `Vary` values (4) and each name, a
/// presence byte and the value, and the body (8-byte length). A string is its UTF-8 length (4
/// bytes) and bytes.
///
/// Version 1 held one response per file (no variant count, the URL after the key). A file of
/// another version, one whose length is not the header's plus the payload's (torn), whose hash
/// differs (corrupt), or whose lengths or counts overrun the payload is rejected: `decode` returns
/// `nil`, and the cache deletes the file, so a folder written by an older version is emptied
/// entry by entry, never misread.
enum CacheEntryCodec {
    /// The first four bytes of every entry file.
    static let magic: [UInt8] = Array("MYHC".utf8)
    /// The version this code writes and reads.
    static let version: UInt16 = 2
    /// The size of the fixed header.
    static let headerLength = 24
    /// The most header fields or `Vary` values a variant may hold when read back.
    static let maximumFieldCount = 10_000
    /// The most variants a file may hold when read back.
    static let maximumVariantCount = 64

    /// The file's bytes for `variants`.
    static func encode(_ variants: CachedVariants) -> Data {
        var payload = Data()
        payload.reserveCapacity(
            variants.responses.reduce(512) { $0 + $1.body.count + CacheHeaderFields.byteCount(of: $1.storedHeaders) + 512 })
        appendString(variants.key, to: &payload)
        append(UInt32(variants.responses.count), to: &payload)
        for entry in variants.responses {
            appendString(entry.url.absoluteString, to: &payload)
            append(UInt32(truncatingIfNeeded: entry.status), to: &payload)
            append(entry.requestTime.timeIntervalSince1970.bitPattern, to: &payload)
            append(entry.responseTime.timeIntervalSince1970.bitPattern, to: &payload)
            append(UInt32(entry.storedHeaders.count), to: &payload)
            for field in entry.storedHeaders {
                appendString(field.name, to: &payload)
                appendString(field.value, to: &payload)
            }
            let vary = entry.varyValues.sorted { $0.key < $1.key }
            append(UInt32(vary.count), to: &payload)
            for (name, value) in vary {
                appendString(name, to: &payload)
                payload.append(value == nil ? 0 : 1)
                appendString(value ?? "", to: &payload)
            }
            append(UInt64(entry.body.count), to: &payload)
            payload.append(entry.body)
        }

        var file = Data(magic)
        file.reserveCapacity(headerLength + payload.count)
        append(version, to: &file)
        append(UInt16(0), to: &file)
        append(UInt64(payload.count), to: &file)
        append(checksum(payload), to: &file)
        file.append(payload)
        return file
    }

    /// Whether the first bytes of a file of `fileSize` bytes are a header of this format whose
    /// length agrees with the file's: the cheap check made on every file when a cache opens.
    static func headerAgrees(_ prefix: Data, fileSize: Int) -> Bool {
        guard fileSize >= headerLength else { return false }
        var reader = Reader(Data(prefix.prefix(headerLength)))
        guard let magicBytes = reader.bytes(4), Array(magicBytes) == magic, reader.uint16() == version, reader.uint16() == 0,
            let length = reader.uint64()
        else { return false }
        return UInt64(fileSize - headerLength) == length
    }

    /// The variants in `file`, or `nil` when the file is not a whole, intact entry of this
    /// format.
    static func decode(_ file: Data) -> CachedVariants? {
        guard file.count >= headerLength else { return nil }
        var reader = Reader(file)
        guard let magicBytes = reader.bytes(4), Array(magicBytes) == magic, reader.uint16() == version, reader.uint16() == 0,
            let length = reader.uint64(), let sum = reader.uint64(), UInt64(file.count - headerLength) == length
        else { return nil }
        let payload = file.subdata(in: file.startIndex + headerLength..<file.endIndex)
        guard checksum(payload) == sum else { return nil }

        var body = Reader(payload)
        guard let key = body.string(), let count = body.uint32(), count >= 1, count <= maximumVariantCount else { return nil }
        var responses: [CachedResponse] = []
        for _ in 0..<count {
            guard let entry = decodeVariant(key: key, from: &body) else { return nil }
            responses.append(entry)
        }
        guard body.isAtEnd else { return nil }
        return CachedVariants(key: key, responses: responses)
    }

    /// One variant of the payload, read off the front of `body`.
    private static func decodeVariant(key: String, from body: inout Reader) -> CachedResponse? {
        guard let urlText = body.string(), let url = URL(string: urlText), let status = body.uint32(), let requestBits = body.uint64(),
            let responseBits = body.uint64(), let headerCount = body.uint32(), headerCount <= maximumFieldCount
        else { return nil }
        var headers: [(name: String, value: String)] = []
        for _ in 0..<headerCount {
            guard let name = body.string(), let value = body.string() else { return nil }
            headers.append((name, value))
        }
        guard let varyCount = body.uint32(), varyCount <= maximumFieldCount else { return nil }
        var varyValues: [String: String?] = [:]
        for _ in 0..<varyCount {
            guard let name = body.string(), let present = body.bytes(1), let value = body.string() else { return nil }
            varyValues[name] = present.first == 0 ? .some(nil) : .some(value)
        }
        guard let bodyLength = body.uint64(), bodyLength <= UInt64(Int.max), let content = body.bytes(Int(bodyLength)) else { return nil }
        return CachedResponse(
            key: key, url: url, status: Int(status), headers: headers, body: content,
            requestTime: Date(timeIntervalSince1970: Double(bitPattern: requestBits)),
            responseTime: Date(timeIntervalSince1970: Double(bitPattern: responseBits)), varyValues: varyValues)
    }

    /// The 64-bit FNV-1a hash of `data`: not cryptographic, it detects torn and damaged files.
    static func checksum(_ data: Data) -> UInt64 {
        data.withUnsafeBytes { bytes in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in bytes {
                hash ^= UInt64(byte)
                hash = hash &* 0x0000_0100_0000_01b3
            }
            return hash
        }
    }

    private static func append<Integer: FixedWidthInteger>(_ value: Integer, to data: inout Data) {
        withUnsafeBytes(of: value.bigEndian) { data.append(contentsOf: $0) }
    }

    private static func appendString(_ text: String, to data: inout Data) {
        let bytes = Array(text.utf8)
        append(UInt32(bytes.count), to: &data)
        data.append(contentsOf: bytes)
    }

    /// Reads big-endian numbers and strings off the front of some bytes, never past their end.
    private struct Reader {
        private let data: Data
        private var offset: Int

        init(_ data: Data) {
            self.data = data
            offset = data.startIndex
        }

        var isAtEnd: Bool { offset == data.endIndex }

        mutating func bytes(_ count: Int) -> Data? {
            guard count >= 0, data.endIndex - offset >= count else { return nil }
            defer { offset += count }
            return data.subdata(in: offset..<offset + count)
        }

        mutating func integer<Integer: FixedWidthInteger>(_: Integer.Type) -> Integer? {
            let size = MemoryLayout<Integer>.size
            guard data.endIndex - offset >= size else { return nil }
            var value: Integer = 0
            for index in offset..<offset + size { value = value << 8 | Integer(data[index]) }
            offset += size
            return value
        }

        mutating func uint16() -> UInt16? { integer(UInt16.self) }
        mutating func uint32() -> UInt32? { integer(UInt32.self) }
        mutating func uint64() -> UInt64? { integer(UInt64.self) }

        mutating func string() -> String? {
            guard let length = uint32(), let bytes = bytes(Int(length)) else { return nil }
            return String(data: bytes, encoding: .utf8)
        }
    }
}
