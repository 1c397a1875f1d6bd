// MoyaDownloader: downloads one file through a Session whose folder for downloads in progress is
// the default, for the tests of two users downloading at once and of the shared session's folder
// at exit (Tests/MoyaTests/Bodies/DownloadFolderTests.swift). Not part of any product.
//
//     MoyaDownloader <test server base URL> <byte count> own|shared [<uid> <gid>]
//
// Run as root with a user and group ID, it becomes that user before doing anything else. It
// sends `GET /bytes/<byte count>` through a session of its own (`own`) or the shared
// `Session.default` (`shared`), checks the file it receives (byte i is i % 251), notes the folder
// its download was written to while it arrived (the parent of the temporary file its destination
// closure is given), shuts its own session down (the shared one cannot be), and prints one line
// of JSON on standard output: a `Report`, which the test reads. Then it exits.
import Foundation
import Moya
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What the test reads: who ran the download, how it ended, and where it was written.
struct Report: Codable {
    /// The effective user ID the download ran as.
    var uid: UInt32
    /// Whether the request succeeded.
    var succeeded = false
    /// The error's description, when it failed.
    var error: String?
    /// The folder the temporary file was in.
    var folder: String?
    /// The folder's owner and permission bits, seen from the destination closure.
    var folderOwner: UInt32?
    var folderMode: UInt32?
    /// Whether the file at its destination has every byte the server sends.
    var bytesVerified = false
    /// Whether the folder is gone once the session has shut down (always `false` for the shared
    /// session, which is never shut down).
    var folderRemoved = false
}

let arguments = CommandLine.arguments
guard arguments.count == 4 || arguments.count == 6, let base = URL(string: arguments[1]), let count = Int(arguments[2]),
    ["own", "shared"].contains(arguments[3])
else {
    FileHandle.standardError.write(Data("usage: MoyaDownloader <base URL> <byte count> own|shared [<uid> <gid>]\n".utf8))
    exit(2)
}
let usesSharedSession = arguments[3] == "shared"
if arguments.count == 6 {
    guard let uid = uid_t(arguments[4]), let gid = gid_t(arguments[5]), setgroups(0, nil) == 0, setgid(gid) == 0, setuid(uid) == 0,
        geteuid() == uid, getegid() == gid
    else {
        FileHandle.standardError.write(Data("MoyaDownloader: could not become user \(arguments[4]): errno \(errno)\n".utf8))
        exit(3)
    }
}

// When the test process dies without waiting for us, stop too.
let parent = getppid()
Thread.detachNewThread {
    while getppid() == parent {
        usleep(100_000)
    }
    exit(4)
}

/// The folder of a download's temporary file, its owner and permission bits, as the destination
/// closure saw them.
final class SeenFolder: Sendable {
    let value = Mutex<(path: String, owner: UInt32, mode: UInt32)?>(nil)
}

/// `GET /bytes/<count>`, saved at `destination`; the folder of the temporary file goes to `seen`.
struct BytesDownload: TargetType {
    let baseURL: URL
    let count: Int
    let destination: URL
    let seen: SeenFolder
    var path: String { "/bytes/\(count)" }
    var method: Moya.Method { .get }
    var headers: [String: String]? { nil }
    var task: Moya.Task {
        .downloadDestination { [seen, destination] temporaryURL, _ in
            let folder = temporaryURL.deletingLastPathComponent().path
            var info = stat()
            if lstat(folder, &info) == 0 {
                seen.value.withLock { $0 = (folder, UInt32(info.st_uid), UInt32(info.st_mode)) }
            }
            return (destination, [])
        }
    }
}

var report = Report(uid: UInt32(geteuid()))
var template = Array((FileManager.default.temporaryDirectory.path + "/moya-downloader-XXXXXX").utf8CString)
guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
    FileHandle.standardError.write(Data("MoyaDownloader: no folder for the destination: errno \(errno)\n".utf8))
    exit(5)
}
let destinationFolder = URL(fileURLWithPath: template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }, isDirectory: true)

let seen = SeenFolder()
let target = BytesDownload(baseURL: base, count: count, destination: destinationFolder.appendingPathComponent("file.bin"), seen: seen)
let session = usesSharedSession ? Session.default : Session(configuration: .init(timeoutIntervalForRequest: 30))
let provider = MoyaProvider<BytesDownload>(session: session)
do {
    _ = try await provider.request(target)
    report.succeeded = true
    let data = try Data(contentsOf: target.destination)
    report.bytesVerified = data.count == count && data.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) }
} catch {
    report.error = "\(error.localizedDescription) [\(error)]"
}
if let (folder, owner, mode) = seen.value.withLock({ $0 }) {
    report.folder = folder
    report.folderOwner = owner
    report.folderMode = mode
}
try? await session.shutdown()
if let folder = report.folder, !usesSharedSession {
    var info = stat()
    report.folderRemoved = lstat(folder, &info) != 0 && errno == ENOENT
}
try? FileManager.default.removeItem(at: destinationFolder)
let encoded = (try? JSONEncoder().encode(report)) ?? Data("{}".utf8)
FileHandle.standardOutput.write(encoded + Data("\n".utf8))
