import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The files of a disk cache: one file per entry, named by the SHA-256 of its key (never by
/// anything a server sent), written to a temporary file in the same directory and renamed, so
/// the real name only ever holds a whole file.
///
/// This type only touches files; which files exist and how recently each was used is the
/// `Index`, kept inside `HTTPCache`'s lock. Writing a temporary file and reading an entry happen
/// outside that lock; the rename that publishes a file and the unlink that removes one happen
/// inside it, so that the index and the directory never disagree about a name.
struct CacheDiskStore: Sendable {
    /// One entry file as the index knows it.
    struct Record: Sendable, Equatable {
        /// The file's size in bytes.
        let size: Int
        /// A number that changes each time the file is replaced: a reader that found a damaged
        /// file removes it only if nobody has replaced it since.
        let generation: UInt64
    }

    /// The entry files by name, least recently used first, bounded by the disk capacity.
    typealias Index = CacheLRU<String, Record>

    /// The suffix of an entry file.
    static let entrySuffix = ".cache"
    /// The suffix of a file being written.
    static let temporarySuffix = ".tmp"

    /// The cache's directory.
    let directory: URL

    /// A store of entry files in `directory`, which is created (mode 0700) if it is missing.
    init(directory: URL) {
        self.directory = directory
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// The file name for the entry stored under `key`: the hex SHA-256 of the key.
    static func fileName(forKey key: String) -> String {
        let digest = SHA256Digest.hash(Array(key.utf8))
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(digest.count * 2)
        for byte in digest {
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self) + entrySuffix
    }

    /// Whether `name` is an entry file's name: 64 lowercase hex digits and the suffix.
    static func isEntryName(_ name: String) -> Bool {
        guard name.hasSuffix(entrySuffix) else { return false }
        let stem = name.utf8.dropLast(entrySuffix.utf8.count)
        return stem.count == 64 && stem.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    /// Indexes the directory as a cache opens: deletes temporary files left by a process that
    /// stopped while writing, and entry files that are torn (their length disagrees with their
    /// header) or of another format version (an older Moya's, never misread as this one's);
    /// orders the rest by modification time and deletes the oldest until they fit in
    /// `capacity`. Other files are left alone.
    func makeIndex(capacity: Int) -> (index: Index, nextGeneration: UInt64) {
        let manager = FileManager.default
        let names = (try? manager.contentsOfDirectory(atPath: directory.path)) ?? []
        var found: [(name: String, size: Int, modified: Date)] = []
        for name in names {
            let path = directory.appendingPathComponent(name).path
            if name.hasSuffix(Self.temporarySuffix) && Self.isEntryName(String(name.prefix(64)) + Self.entrySuffix) {
                unlink(path)
                continue
            }
            guard Self.isEntryName(name), let attributes = try? manager.attributesOfItem(atPath: path),
                attributes[.type] as? FileAttributeType == .typeRegular, let size = (attributes[.size] as? NSNumber)?.intValue
            else { continue }
            guard let prefix = readPrefix(path, count: CacheEntryCodec.headerLength), CacheEntryCodec.headerAgrees(prefix, fileSize: size) else {
                unlink(path)
                continue
            }
            found.append((name, size, attributes[.modificationDate] as? Date ?? .distantPast))
        }
        var index = Index(capacity: capacity)
        var generation: UInt64 = 0
        for file in found.sorted(by: { ($0.modified, $0.name) < ($1.modified, $1.name) }) {
            generation += 1
            let (_, evicted) = index.insert(file.name, Record(size: file.size, generation: generation), cost: file.size)
            for victim in evicted { delete(victim.key) }
            if file.size > capacity { delete(file.name) }
        }
        return (index, generation + 1)
    }

    /// Writes `contents` to a new temporary file for the entry file `name` (mode 0600) and
    /// returns its URL, or `nil` if writing failed (nothing is left behind then).
    func writeTemporary(_ contents: Data, for name: String) -> URL? {
        let stem = name.dropLast(Self.entrySuffix.count)
        let url = directory.appendingPathComponent("\(stem).\(UUID().uuidString)\(Self.temporarySuffix)")
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return nil }
        let written = contents.withUnsafeBytes { bytes -> Bool in
            var offset = 0
            while offset < bytes.count {
                let count = write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard close(descriptor) == 0, written else {
            unlink(url.path)
            return nil
        }
        return url
    }

    /// Publishes a temporary file as the entry file `name`, replacing any file of that name in
    /// one step (`rename`). On failure the temporary file is deleted.
    func commit(_ temporary: URL, as name: String) -> Bool {
        guard rename(temporary.path, directory.appendingPathComponent(name).path) == 0 else {
            unlink(temporary.path)
            return false
        }
        return true
    }

    /// Deletes the entry file `name`, if it exists.
    func delete(_ name: String) {
        unlink(directory.appendingPathComponent(name).path)
    }

    /// The contents of the entry file `name`, or `nil` when it cannot be read.
    ///
    /// Read with `open` and `read` rather than `Data(contentsOf:)`, which on Linux loses a 4 KiB
    /// buffer when a file is shorter than it was when it was opened (LeakSanitizer saw it with
    /// damaged entries).
    func read(_ name: String) -> Data? {
        let descriptor = open(directory.appendingPathComponent(name).path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_size >= 0, status.st_size <= Int64(Int32.max) else { return nil }
        var data = Data(count: Int(status.st_size))
        let filled = data.withUnsafeMutableBytes { buffer -> Int in
            var done = 0
            while done < buffer.count {
                let count = systemRead(descriptor, buffer.baseAddress! + done, buffer.count - done)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                done += count
            }
            return done
        }
        // A file that shrank while it was read is cut to what was read; the entry's own lengths
        // and checksum then find it torn.
        return filled == data.count ? data : data.prefix(filled)
    }

    /// Sets the entry file's modification time to now, which is how a reopened cache knows
    /// which entries were used most recently. Best effort.
    func markUsed(_ name: String) {
        try? FileManager.default.setAttributes([.modificationDate: Date()], ofItemAtPath: directory.appendingPathComponent(name).path)
    }

    /// The first `count` bytes of the file at `path` (fewer if it is shorter).
    private func readPrefix(_ path: String, count: Int) -> Data? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        return try? handle.read(upToCount: count) ?? Data()
    }
}

/// The C library's `read`, which ``CacheDiskStore/read(_:)`` hides inside the type.
private func systemRead(_ descriptor: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(descriptor, buffer, count)
}
