import Foundation

/// The cache's own encodings of a stored response: its metadata (what an ``HTTPCacheRecord``
/// carries, opaque to a storage) and, for ``HTTPCacheDiskStorage``, the file that holds a record.
///
/// **Metadata**: the magic `MYHM`, the version (2 bytes), then the URL, the status (4 bytes),
/// the request and response times (the bits of two `Double`s), the header count (4) and each
/// name and value, the count of `Vary` values (4) and each name, a presence byte and the value.
/// A string is its UTF-8 length (4 bytes) and bytes; numbers are big-endian.
///
/// **A record's file**: a 32-byte header, the metadata, the body.
///
/// | Bytes | Holds |
/// |---|---|
/// | 4 | the magic `MYHC` |
/// | 2 | the format version, 3 |
/// | 2 | zero (reserved) |
/// | 4 | the metadata's length |
/// | 4 | zero (reserved) |
/// | 8 | the body's length |
/// | 8 | the FNV-1a 64-bit hash of the metadata and the body |
///
/// Versions 1 and 2 held every variant of a URL in one file. A file of another version, one
/// whose length is not the header's plus the metadata's and the body's (torn), or whose hash
/// differs (damaged) is rejected, and the disk storage deletes it: a folder written by an older
/// version is emptied file by file, never misread.
enum CacheEntryCodec {
    /// The first four bytes of every record file.
    static let magic: [UInt8] = Array("MYHC".utf8)
    /// The first four bytes of every record's metadata.
    static let metadataMagic: [UInt8] = Array("MYHM".utf8)
    /// The record file version this code writes and reads.
    static let version: UInt16 = 3
    /// The metadata version this code writes and reads.
    static let metadataVersion: UInt16 = 1
    /// The size of a record file's fixed header.
    static let headerLength = 32
    /// The most header fields or `Vary` values a response may hold when read back.
    static let maximumFieldCount = 10_000
    /// The most metadata bytes a record may have when read back.
    static let maximumMetadataLength = 1 << 22

    // MARK: - Metadata

    /// The metadata of `entry`.
    static func encodeMetadata(_ entry: CachedResponse) -> Data {
        var data = Data(metadataMagic)
        data.reserveCapacity(CacheHeaderFields.byteCount(of: entry.storedHeaders) + 256)
        append(metadataVersion, to: &data)
        appendString(entry.url.absoluteString, to: &data)
        append(UInt32(truncatingIfNeeded: entry.status), to: &data)
        append(entry.requestTime.timeIntervalSince1970.bitPattern, to: &data)
        append(entry.responseTime.timeIntervalSince1970.bitPattern, to: &data)
        append(UInt32(entry.storedHeaders.count), to: &data)
        for field in entry.storedHeaders {
            appendString(field.name, to: &data)
            appendString(field.value, to: &data)
        }
        let vary = entry.varyValues.sorted { $0.key < $1.key }
        append(UInt32(vary.count), to: &data)
        for (name, value) in vary {
            appendString(name, to: &data)
            data.append(value == nil ? 0 : 1)
            appendString(value ?? "", to: &data)
        }
        return data
    }

    /// The response `record` describes, its body in the storage, as a cache of that kind
    /// (`shared`) holds it; `nil` when the metadata is not whole and of this version.
    static func decode(_ record: HTTPCacheRecord, shared: Bool = false) -> CachedResponse? {
        guard record.bodyLength >= 0 else { return nil }
        var reader = Reader(record.metadata)
        guard let magicBytes = reader.bytes(4), Array(magicBytes) == metadataMagic, reader.uint16() == metadataVersion,
            let urlText = reader.string(), let url = URL(string: urlText), let status = reader.uint32(), let requestBits = reader.uint64(),
            let responseBits = reader.uint64(), let headerCount = reader.uint32(), headerCount <= maximumFieldCount
        else { return nil }
        var headers: [(name: String, value: String)] = []
        for _ in 0..<headerCount {
            guard let name = reader.string(), let value = reader.string() else { return nil }
            headers.append((name, value))
        }
        guard let varyCount = reader.uint32(), varyCount <= maximumFieldCount else { return nil }
        var varyValues: [String: String?] = [:]
        for _ in 0..<varyCount {
            guard let name = reader.string(), let present = reader.bytes(1), let value = reader.string() else { return nil }
            varyValues[name] = present.first == 0 ? .some(nil) : .some(value)
        }
        guard reader.isAtEnd else { return nil }
        return CachedResponse(
            id: record.id, key: record.key, url: url, status: Int(status), headers: headers, body: .stored(record, range: nil),
            requestTime: Date(timeIntervalSince1970: Double(bitPattern: requestBits)),
            responseTime: Date(timeIntervalSince1970: Double(bitPattern: responseBits)), varyValues: varyValues, shared: shared)
    }

    // MARK: - Record files

    /// A record file's header.
    struct FileHeader: Equatable {
        /// The metadata's length.
        var metadataLength: Int
        /// The body's length.
        var bodyLength: Int64
        /// The hash of the metadata and the body.
        var checksum: UInt64

        /// The file's length: the header's, the metadata's and the body's.
        var fileLength: Int64 { Int64(CacheEntryCodec.headerLength + metadataLength) + bodyLength }
    }

    /// The bytes of `header`.
    static func encode(_ header: FileHeader) -> Data {
        var data = Data(magic)
        append(version, to: &data)
        append(UInt16(0), to: &data)
        append(UInt32(header.metadataLength), to: &data)
        append(UInt32(0), to: &data)
        append(UInt64(header.bodyLength), to: &data)
        append(header.checksum, to: &data)
        return data
    }

    /// The header at the start of `prefix`, when it is one of this version.
    static func decodeHeader(_ prefix: Data) -> FileHeader? {
        guard prefix.count >= headerLength else { return nil }
        var reader = Reader(Data(prefix.prefix(headerLength)))
        guard let magicBytes = reader.bytes(4), Array(magicBytes) == magic, reader.uint16() == version, reader.uint16() == 0,
            let metadataLength = reader.uint32(), Int(metadataLength) <= maximumMetadataLength, reader.uint32() == 0, let bodyLength = reader.uint64(),
            bodyLength <= UInt64(Int64.max) - UInt64(headerLength) - UInt64(metadataLength), let sum = reader.uint64()
        else { return nil }
        return FileHeader(metadataLength: Int(metadataLength), bodyLength: Int64(bodyLength), checksum: sum)
    }

    /// The 64-bit FNV-1a hash, fed in parts: detects torn and damaged files, not tampering.
    struct Checksum {
        /// The hash of what was fed so far.
        private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

        /// Feeds `data`.
        mutating func update(_ data: Data) {
            var hash = value
            data.withUnsafeBytes { bytes in
                for byte in bytes {
                    hash ^= UInt64(byte)
                    hash = hash &* 0x0000_0100_0000_01b3
                }
            }
            value = hash
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
