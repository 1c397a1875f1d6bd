import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// An ``HTTPCacheStorage`` in a directory of this process, bounded in bytes, the least recently
/// used records evicted first.
///
/// Each record is one file, named by the SHA-256 of its key and its identity (never by anything
/// a server sent): a header, the record's metadata, the body. A body is
/// written in chunks to a temporary file in the same directory, which is renamed into place
/// when the write commits: a process stopped mid-write leaves no record under a real name, and
/// the temporary file is deleted when the directory is opened again. A file found torn (its
/// length disagrees with its header) when the directory is opened, or damaged (its checksum
/// disagrees) when its body is read, is deleted. The directory is made with mode 0700 and files
/// with 0600.
///
/// Meant for one process at a time: opening indexes the directory once, and two processes that
/// write to one directory do not see each other's writes. Files are read and written on a
/// queue of its own, never on the caller's thread.
public final class HTTPCacheDiskStorage: HTTPCacheStorage {
    /// The directory of the records.
    public let directory: URL
    /// The most bytes the record files may take.
    public let capacity: Int

    /// One record file as the index knows it.
    struct FileEntry: Sendable {
        /// The record, metadata included.
        let record: HTTPCacheRecord
        /// The file's size in bytes.
        let size: Int
    }

    private struct State: Sendable {
        /// The record files by name, least recently used first, bounded by the capacity.
        var files: CacheLRU<String, FileEntry>
        /// The file names of each key's records.
        var namesByKey: [String: Set<String>] = [:]
    }

    /// The suffix of a record file.
    static let entrySuffix = ".cache"
    /// The suffix of a file being written.
    static let temporarySuffix = ".tmp"
    /// The bytes read from a file at a time.
    static let chunkSize = 256 * 1024

    private let state: Protected<State>
    private let queue = DispatchQueue(label: "moya.http-cache.disk", attributes: .concurrent)

    /// Opens the storage in `directory` (created with mode 0700 when it is missing), of at most
    /// `capacity` bytes: indexes the record files there (most recently used by their
    /// modification time), deletes the files left half-written or torn and those of another
    /// format version, and evicts down to `capacity`. Other files are left alone.
    public init(directory: URL, capacity: Int) {
        self.directory = directory
        self.capacity = max(0, capacity)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        state = Protected(State(files: CacheLRU(capacity: self.capacity)))
        index()
    }

    /// A body larger than the whole storage is not kept.
    public var maximumBodyLength: Int64 { Int64(capacity) }

    /// `false`: the directory is this process's.
    public var isShared: Bool { false }

    /// The bytes the record files take.
    public var currentUsage: Int { state.withLock { $0.files.totalCost } }

    /// The record file names, least recently used first.
    var fileNamesOldestFirst: [String] { state.withLock { $0.files.keysOldestFirst } }

    // MARK: - HTTPCacheStorage

    /// The records of `key`, the oldest first; each is now among the most recently used.
    public func records(forKey key: String) async throws -> [HTTPCacheRecord] {
        state.withLock { state in
            guard let names = state.namesByKey[key] else { return [] }
            return names.compactMap { state.files.touch($0)?.record }.sorted { ($0.storedAt, $0.id.uuidString) < ($1.storedAt, $1.id.uuidString) }
        }
    }

    /// Opens `record`'s file for reading its body.
    public func openBody(of record: HTTPCacheRecord) async throws -> any HTTPCacheBodyReader {
        let name = Self.fileName(key: record.key, id: record.id)
        guard let entry = state.withLock({ $0.files.peek(name) }) else { throw HTTPCacheStorageError.recordNotFound }
        let path = directory.appendingPathComponent(name).path
        let descriptor = try await io { () -> Int32 in
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw HTTPCacheStorageError.recordNotFound }
            return descriptor
        }
        return DiskBodyReader(descriptor: descriptor, entry: entry, name: name, storage: self)
    }

    /// Starts a temporary file for `record`.
    public func makeWriter(for record: HTTPCacheRecord) async throws -> any HTTPCacheBodyWriter {
        let name = Self.fileName(key: record.key, id: record.id)
        let temporary = directory.appendingPathComponent("\(name.dropLast(Self.entrySuffix.count)).\(UUID().uuidString)\(Self.temporarySuffix)")
        let descriptor = try await io { () -> Int32 in
            let descriptor = open(temporary.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            guard descriptor >= 0 else { throw HTTPCacheStorageError.failed("cannot create a file in \(self.directory.path): \(Self.errorText())") }
            // The header is written last, once the lengths and the checksum are known.
            var head = Data(count: CacheEntryCodec.headerLength)
            head.append(record.metadata)
            guard Self.writeAll(descriptor, head) else {
                close(descriptor)
                unlink(temporary.path)
                throw HTTPCacheStorageError.failed("cannot write to \(temporary.path): \(Self.errorText())")
            }
            return descriptor
        }
        return DiskBodyWriter(descriptor: descriptor, temporary: temporary, name: name, record: record, storage: self)
    }

    /// Rewrites the file of the record with `record`'s identity with `record`'s metadata and the
    /// body it has.
    public func replaceMetadata(of record: HTTPCacheRecord) async throws -> Bool {
        let name = Self.fileName(key: record.key, id: record.id)
        guard state.withLock({ $0.files.peek(name) }) != nil else { return false }
        let reader: any HTTPCacheBodyReader
        do {
            reader = try await openBody(of: record)
        } catch HTTPCacheStorageError.recordNotFound {
            return false
        }
        let writer = try await makeWriter(for: record)
        do {
            while let chunk = try await reader.next() { try await writer.write(chunk) }
            await reader.close()
            try await writer.commit(replacing: [])
        } catch {
            await reader.close()
            await writer.abort()
            throw error
        }
        return true
    }

    /// Removes the files of `key`'s records in `ids`, or of all of them.
    public func removeRecords(forKey key: String, ids: [UUID]?) async throws {
        removeRecords(key: key, ids: ids.map(Set.init))
    }

    /// Removes every record file.
    public func removeAll() async throws {
        removeEverything()
    }

    /// Removes every record file, at once.
    func removeEverything() {
        state.withLock { state in
            for (name, _) in state.files.removeAll() { delete(name) }
            state.namesByKey = [:]
        }
    }

    /// Removes the files of `key`'s records in `ids`, or of all of them, at once.
    func removeRecords(key: String, ids: Set<UUID>?) {
        state.withLock { state in
            for name in state.namesByKey[key] ?? [] {
                guard let entry = state.files.peek(name), ids?.contains(entry.record.id) ?? true else { continue }
                forget(name, key: key, in: &state)
            }
        }
    }

    // MARK: - Files

    /// The file name of `key`'s record `id`: the hex SHA-256 of the key, a dash, the identity.
    static func fileName(key: String, id: UUID) -> String {
        let digest = SHA256Digest.hash(Array(key.utf8))
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self) + "-" + id.uuidString.lowercased() + entrySuffix
    }

    /// Whether `name` is a record file's name: 64 lowercase hex digits, a dash, a lowercase
    /// UUID, the suffix.
    static func isEntryName(_ name: String) -> Bool {
        guard name.hasSuffix(entrySuffix) else { return false }
        let stem = Array(name.utf8.dropLast(entrySuffix.utf8.count))
        guard stem.count == 64 + 1 + 36, stem[64] == UInt8(ascii: "-") else { return false }
        let isHex = { (byte: UInt8) in (byte >= 0x30 && byte <= 0x39) || (byte >= 0x61 && byte <= 0x66) }
        guard stem[..<64].allSatisfy(isHex) else { return false }
        return UUID(uuidString: String(decoding: stem[65...], as: UTF8.self)) != nil && stem[65...].allSatisfy { isHex($0) || $0 == UInt8(ascii: "-") }
    }

    /// Publishes the written temporary file as `entry`'s file, removing the records of its key in
    /// `replacing`; evicts the least recently used files beyond the capacity.
    fileprivate func publish(_ temporary: URL, as name: String, entry: FileEntry, replacing: Set<UUID>) throws {
        try state.withLock { state in
            guard rename(temporary.path, directory.appendingPathComponent(name).path) == 0 else {
                unlink(temporary.path)
                throw HTTPCacheStorageError.failed("cannot rename \(temporary.lastPathComponent) in \(directory.path): \(Self.errorText())")
            }
            let key = entry.record.key
            for other in state.namesByKey[key] ?? [] where other != name {
                if let record = state.files.peek(other)?.record, replacing.contains(record.id) { forget(other, key: key, in: &state) }
            }
            insert(name, entry, in: &state)
        }
    }

    /// Deletes the damaged file `name` of `key`, if it is still the one indexed.
    fileprivate func discardDamaged(_ name: String, key: String) {
        state.withLock { state in forget(name, key: key, in: &state) }
    }

    private func insert(_ name: String, _ entry: FileEntry, in state: inout State) {
        let (_, evicted) = state.files.insert(name, entry, cost: entry.size)
        if entry.size <= capacity {
            state.namesByKey[entry.record.key, default: []].insert(name)
        } else {
            delete(name)
        }
        for victim in evicted {
            state.namesByKey[victim.value.record.key]?.remove(victim.key)
            if state.namesByKey[victim.value.record.key]?.isEmpty == true { state.namesByKey[victim.value.record.key] = nil }
            delete(victim.key)
        }
        // What the insert replaced under the same name was the same record, rewritten.
    }

    private func forget(_ name: String, key: String, in state: inout State) {
        guard state.files.remove(name) != nil else { return }
        state.namesByKey[key]?.remove(name)
        if state.namesByKey[key]?.isEmpty == true { state.namesByKey[key] = nil }
        delete(name)
    }

    private func delete(_ name: String) {
        unlink(directory.appendingPathComponent(name).path)
    }

    /// Indexes the directory (``init(directory:capacity:)``).
    private func index() {
        let manager = FileManager.default
        let names = (try? manager.contentsOfDirectory(atPath: directory.path)) ?? []
        var found: [(name: String, entry: FileEntry, modified: Date)] = []
        for name in names {
            let path = directory.appendingPathComponent(name).path
            if name.hasSuffix(Self.temporarySuffix) && name.count > 64
                && name.utf8.prefix(64).allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
            {
                unlink(path)
                continue
            }
            if name.hasSuffix(Self.entrySuffix), !Self.isEntryName(name), name.count == 64 + Self.entrySuffix.count {
                // A file of versions 1 and 2, which held every variant of a URL in one file.
                unlink(path)
                continue
            }
            guard Self.isEntryName(name), let attributes = try? manager.attributesOfItem(atPath: path),
                attributes[.type] as? FileAttributeType == .typeRegular, let size = (attributes[.size] as? NSNumber)?.intValue
            else { continue }
            guard let entry = Self.readEntry(path: path, name: name, size: size) else {
                unlink(path)
                continue
            }
            found.append((name, entry, attributes[.modificationDate] as? Date ?? .distantPast))
        }
        state.withLock { state in
            for file in found.sorted(by: { ($0.modified, $0.name) < ($1.modified, $1.name) }) {
                insert(file.name, file.entry, in: &state)
            }
        }
    }

    /// The record of the file at `path`, when its header is of this version, its length agrees
    /// with the header and its metadata can be read.
    private static func readEntry(path: String, name: String, size: Int) -> FileEntry? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        guard let prefix = try? handle.read(upToCount: CacheEntryCodec.headerLength), let header = CacheEntryCodec.decodeHeader(prefix),
            header.fileLength == Int64(size), let metadata = try? handle.read(upToCount: header.metadataLength), metadata.count == header.metadataLength
        else { return nil }
        let stem = name.dropLast(entrySuffix.count)
        guard let id = UUID(uuidString: String(stem.suffix(36))) else { return nil }
        // The key is in the metadata's URL; the record's other fields come from the metadata.
        let provisional = HTTPCacheRecord(id: id, key: "", metadata: metadata, bodyLength: header.bodyLength, storedAt: .distantPast, expiresAt: .distantFuture)
        guard let response = CacheEntryCodec.decode(provisional) else { return nil }
        let key = HTTPCache.key(for: response.url)
        guard fileName(key: key, id: id) == name else { return nil }
        let record = HTTPCacheRecord(
            id: id, key: key, metadata: metadata, bodyLength: header.bodyLength, storedAt: response.responseTime, expiresAt: response.expiresAt)
        return FileEntry(record: record, size: size)
    }

    /// Runs `body` on the storage's queue.
    func io<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Swift.Result { try body() }) }
        }
    }

    /// Writes all of `data` to `descriptor`.
    static func writeAll(_ descriptor: Int32, _ data: Data) -> Bool {
        data.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
    }

    /// The text of the C library's last error.
    static func errorText() -> String {
        String(cString: strerror(errno))
    }
}

/// Reads a record file's body in chunks, checking the file's checksum at its end.
private final class DiskBodyReader: HTTPCacheBodyReader {
    private struct State {
        var descriptor: Int32
        var remaining: Int64
        var checksum = CacheEntryCodec.Checksum()
        var started = false
    }

    private let state: Protected<State>
    private let entry: HTTPCacheDiskStorage.FileEntry
    private let name: String
    private let storage: HTTPCacheDiskStorage

    init(descriptor: Int32, entry: HTTPCacheDiskStorage.FileEntry, name: String, storage: HTTPCacheDiskStorage) {
        state = Protected(State(descriptor: descriptor, remaining: entry.record.bodyLength))
        self.entry = entry
        self.name = name
        self.storage = storage
    }

    func next() async throws -> Data? {
        do {
            return try await read()
        } catch HTTPCacheStorageError.corrupted(let reason) {
            storage.discardDamaged(name, key: entry.record.key)
            throw HTTPCacheStorageError.corrupted(reason)
        }
    }

    private func read() async throws -> Data? {
        let entry = self.entry
        let state = self.state
        let result: Data? = try await storage.io {
            try state.withLock { state -> Data? in
                guard state.descriptor >= 0 else { return nil }
                if !state.started {
                    state.started = true
                    let offset = off_t(CacheEntryCodec.headerLength + entry.record.metadata.count)
                    guard lseek(state.descriptor, offset, SEEK_SET) == offset else { throw HTTPCacheStorageError.failed("cannot seek in a cache file") }
                    state.checksum.update(entry.record.metadata)
                }
                guard state.remaining > 0 else { return nil }
                let count = Int(min(Int64(HTTPCacheDiskStorage.chunkSize), state.remaining))
                var chunk = Data(count: count)
                let filled = chunk.withUnsafeMutableBytes { buffer -> Int in
                    var done = 0
                    while done < buffer.count {
                        let read = systemRead(state.descriptor, buffer.baseAddress! + done, buffer.count - done)
                        if read < 0, errno == EINTR { continue }
                        guard read > 0 else { break }
                        done += read
                    }
                    return done
                }
                guard filled == count else { throw HTTPCacheStorageError.corrupted("a cache file ended before its body") }
                state.remaining -= Int64(count)
                state.checksum.update(chunk)
                if state.remaining == 0 {
                    var prefix = Data(count: CacheEntryCodec.headerLength)
                    let read = prefix.withUnsafeMutableBytes { pread(state.descriptor, $0.baseAddress!, CacheEntryCodec.headerLength, 0) }
                    guard read == CacheEntryCodec.headerLength, let header = CacheEntryCodec.decodeHeader(prefix), header.checksum == state.checksum.value
                    else { throw HTTPCacheStorageError.corrupted("a cache file's checksum disagrees with its contents") }
                }
                return chunk
            }
        }
        return result
    }

    func close() async {
        state.withLock { state in
            if state.descriptor >= 0 { _ = systemClose(state.descriptor) }
            state.descriptor = -1
        }
    }

    deinit {
        let descriptor = state.withLock { $0.descriptor }
        if descriptor >= 0 { _ = systemClose(descriptor) }
    }
}

/// Writes a record's body to its temporary file, then renames the file into place.
private final class DiskBodyWriter: HTTPCacheBodyWriter {
    private struct State {
        var descriptor: Int32
        var written: Int64 = 0
        var checksum = CacheEntryCodec.Checksum()
    }

    private let state: Protected<State>
    private let temporary: URL
    private let name: String
    private let record: HTTPCacheRecord
    private let storage: HTTPCacheDiskStorage

    init(descriptor: Int32, temporary: URL, name: String, record: HTTPCacheRecord, storage: HTTPCacheDiskStorage) {
        var initial = State(descriptor: descriptor)
        initial.checksum.update(record.metadata)
        state = Protected(initial)
        self.temporary = temporary
        self.name = name
        self.record = record
        self.storage = storage
    }

    func write(_ chunk: Data) async throws {
        let limit = storage.maximumBodyLength
        let state = self.state
        let path = temporary.path
        try await storage.io {
            try state.withLock { state in
                guard state.descriptor >= 0 else { throw HTTPCacheStorageError.failed("the write was already ended") }
                guard state.written + Int64(chunk.count) <= limit else { throw HTTPCacheStorageError.bodyTooLarge(limit: limit) }
                guard HTTPCacheDiskStorage.writeAll(state.descriptor, chunk) else {
                    throw HTTPCacheStorageError.failed("cannot write to \(path): \(HTTPCacheDiskStorage.errorText())")
                }
                state.written += Int64(chunk.count)
                state.checksum.update(chunk)
            }
        }
    }

    func commit(replacing: [UUID]) async throws {
        let state = self.state
        let record = self.record
        let temporary = self.temporary
        let size: (written: Int64, file: Int) = try await storage.io {
            try state.withLock { state in
                guard state.descriptor >= 0 else { throw HTTPCacheStorageError.failed("the write was already ended") }
                let header = CacheEntryCodec.FileHeader(metadataLength: record.metadata.count, bodyLength: state.written, checksum: state.checksum.value)
                let bytes = CacheEntryCodec.encode(header)
                let written = bytes.withUnsafeBytes { pwrite(state.descriptor, $0.baseAddress!, bytes.count, 0) }
                let closed = systemClose(state.descriptor)
                state.descriptor = -1
                guard written == bytes.count, closed == 0 else {
                    unlink(temporary.path)
                    throw HTTPCacheStorageError.failed("cannot finish \(temporary.path): \(HTTPCacheDiskStorage.errorText())")
                }
                return (state.written, Int(header.fileLength))
            }
        }
        let published = HTTPCacheRecord(
            id: record.id, key: record.key, metadata: record.metadata, bodyLength: size.written, storedAt: record.storedAt, expiresAt: record.expiresAt)
        try storage.publish(temporary, as: name, entry: .init(record: published, size: size.file), replacing: Set(replacing))
    }

    func abort() async {
        let descriptor = state.withLock { state -> Int32 in
            defer { state.descriptor = -1 }
            return state.descriptor
        }
        guard descriptor >= 0 else { return }
        _ = systemClose(descriptor)
        unlink(temporary.path)
    }

    deinit {
        let descriptor = state.withLock { $0.descriptor }
        if descriptor >= 0 {
            _ = systemClose(descriptor)
            unlink(temporary.path)
        }
    }
}

/// The C library's `read`, which the reader's own methods hide.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}

/// The C library's `close`, which the reader's and writer's own methods hide.
private func systemClose(_ descriptor: Int32) -> Int32 {
    close(descriptor)
}
