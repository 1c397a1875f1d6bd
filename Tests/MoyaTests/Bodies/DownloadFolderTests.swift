import Foundation
import MoyaTestServer
import MoyaTesting
import Testing

@testable import Moya

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where downloads are written while they arrive (`Session.Configuration.temporaryDirectory`):
/// by default a folder of each session's own, made on its first download with a random name
/// that only its user may enter, and removed when the session shuts down; a folder the user
/// configured is checked before every download, and one that another user owns or may write to,
/// or a symbolic link, fails the download before anything is sent.
///
/// The folders are seen as a download sees them: the parent of the temporary file its
/// destination closure is given.
@Suite("Downloads: the folder they are written to while they arrive")
struct DownloadFolderTests {
    let server: TestServer
    let scratch: TemporaryDirectory

    init() async throws {
        server = try await TestServer.start()
        scratch = try TemporaryDirectory()
    }

    /// Whether the tests run as root, and so can act as a second user.
    static let isRoot = geteuid() == 0

    /// The `nobody` user and its group.
    static func nobody() throws -> (uid: uid_t, gid: gid_t) {
        guard let entry = getpwnam("nobody") else { throw MissingUser() }
        return (entry.pointee.pw_uid, entry.pointee.pw_gid)
    }

    struct MissingUser: Error, CustomStringConvertible {
        var description: String { "there is no user named nobody" }
    }

    /// What `lstat` says of `path`, or `nil` when nothing is there.
    static func status(_ path: String) -> stat? {
        var info = stat()
        return lstat(path, &info) == 0 ? info : nil
    }

    /// Whether `path` is a directory (not a link) owned by `uid` with permissions 0700.
    static func isPrivateFolder(_ path: String, of uid: uid_t) -> Bool {
        guard let info = status(path) else { return false }
        return info.st_mode & S_IFMT == S_IFDIR && info.st_uid == uid && info.st_mode & 0o7777 == 0o700
    }

    /// Downloads `/bytes/<count>` through `session` into the scratch folder, and returns the
    /// result and the folder the temporary file was in.
    func download(_ session: Session, count: Int = 20_000, as name: String = "file.bin") async -> (Result<Moya.Response, MoyaError>, String?) {
        let folders = Recorder<String>()
        let destination = scratch.file(name)
        let target = Remote(
            server.baseURL, "/bytes/\(count)",
            task: .downloadDestination { temporaryURL, _ in
                folders.append(temporaryURL.deletingLastPathComponent().path)
                return (destination, [.removePreviousFile])
            })
        let result = await send(MoyaProvider<Remote>(session: session), target)
        return (result, folders.values.first)
    }

    /// The names in `folder`, or `nil` when it cannot be read.
    /// What `folder` holds, but the marker by which a private folder's process owns it.
    static func contents(_ folder: URL) -> [String]? {
        (try? FileManager.default.contentsOfDirectory(atPath: folder.path))?.filter { $0 != DownloadFolderOwner.markerName }
    }

    // MARK: - The default: a private folder per session

    @Test("By default a download goes to a folder of the session's own: random name, mode 0700, removed at shutdown")
    func defaultFolderIsPrivate() async throws {
        let session = Session()
        let (result, seen) = await download(session)
        #expect(throws: Never.self) { try result.get() }
        let folder = try #require(seen)
        #expect(Self.isPrivateFolder(folder, of: geteuid()), "the folder is a directory of ours, mode 0700")
        let name = URL(fileURLWithPath: folder).lastPathComponent
        #expect(name.hasPrefix("org.moya.downloads-") && name != "org.moya.downloads-XXXXXX", "a random name, not \(name)")
        let (again, seenAgain) = await download(session, as: "second.bin")
        #expect(throws: Never.self) { try again.get() }
        #expect(seenAgain == folder, "the session keeps its folder")
        try await session.shutdown()
        #expect(Self.status(folder) == nil, "the folder is removed at shutdown")
    }

    @Test("Two sessions get two different private folders")
    func sessionsDoNotShare() async throws {
        let first = Session()
        let second = Session()
        let (firstResult, firstFolder) = await download(first, as: "first.bin")
        let (secondResult, secondFolder) = await download(second, as: "second.bin")
        #expect(throws: Never.self) { try firstResult.get() }
        #expect(throws: Never.self) { try secondResult.get() }
        let one = try #require(firstFolder)
        let other = try #require(secondFolder)
        #expect(one != other)
        #expect(Self.isPrivateFolder(one, of: geteuid()) && Self.isPrivateFolder(other, of: geteuid()))
        try await first.shutdown()
        try await second.shutdown()
        #expect(Self.status(one) == nil && Self.status(other) == nil)
    }

    @Test("The private folder is made on the first download, not with the session, and goes at shutdown")
    func folderMadeLazily() async throws {
        let parent = scratch.file("parent")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: false)
        let session = Session(configuration: .init(temporaryDirectory: parent.appendingPathComponent("org.moya.downloads-XXXXXX")))
        let plain = await send(MoyaProvider<Remote>(session: session), Remote(server.baseURL, "/bytes/100"))
        #expect(throws: Never.self) { try plain.get() }
        #expect(Self.contents(parent) == [], "no folder before the first download")

        let (result, seen) = await download(session)
        #expect(throws: Never.self) { try result.get() }
        let folder = try #require(seen)
        #expect(URL(fileURLWithPath: folder).deletingLastPathComponent().standardizedFileURL.path == parent.standardizedFileURL.path)
        #expect(Self.isPrivateFolder(folder, of: geteuid()))
        #expect(URL(fileURLWithPath: folder).lastPathComponent != "org.moya.downloads-XXXXXX")
        try await session.shutdown()
        #expect(Self.contents(parent) == [], "the folder is removed at shutdown")
    }

    @Test("A session released without a shutdown removes its folder too")
    func releasedSessionRemovesFolder() async throws {
        var session: Session? = Session()
        let (result, seen) = await download(try #require(session))
        #expect(throws: Never.self) { try result.get() }
        let folder = try #require(seen)
        session = nil
        #expect(await eventually { Self.status(folder) == nil }, "the folder of a released session is removed")
    }

    @Test("A private folder that vanished is replaced by a new one, and a link planted at its name is not followed")
    func vanishedFolderReplaced() async throws {
        let parent = scratch.file("parent")
        let elsewhere = scratch.file("elsewhere")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: false)
        let session = Session(configuration: .init(temporaryDirectory: parent.appendingPathComponent("org.moya.downloads-XXXXXX")))
        let (first, seen) = await download(session, as: "first.bin")
        #expect(throws: Never.self) { try first.get() }
        let folder = try #require(seen)
        // A cleaner of the temporary directory removes the folder; someone who saw its name
        // puts a link to a folder of theirs in its place.
        try FileManager.default.removeItem(atPath: folder)
        try FileManager.default.createSymbolicLink(atPath: folder, withDestinationPath: elsewhere.path)

        let (second, secondFolder) = await download(session, as: "second.bin")
        #expect(throws: Never.self) { try second.get() }
        let replacement = try #require(secondFolder)
        #expect(replacement != folder)
        #expect(Self.isPrivateFolder(replacement, of: geteuid()))
        #expect(Self.contents(elsewhere) == [], "nothing was written through the link")
        try await session.shutdown()
        #expect(Self.status(replacement) == nil)
        try? FileManager.default.removeItem(atPath: folder)
    }

    @Test("An interrupted download resumes within the session, in its private folder, which goes at shutdown")
    func resumeInPrivateFolder() async throws {
        let content = PatternBytes.make(400_000) { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 9) }
        let mock = try await MockServer.start()
        let served = Recorder<Int>()
        mock.route("GET", "/file") { request in
            let headers: [(name: String, value: String)] = [("ETag", "\"v1\""), ("Accept-Ranges", "bytes")]
            if let range = request.header("Range"), range.hasPrefix("bytes="), let start = Int(range.dropFirst(6).dropLast()),
                request.header("If-Range") == "\"v1\"", start < content.count
            {
                served.append(206)
                return MockResponse(
                    status: 206, headers: headers + [("Content-Range", "bytes \(start)-\(content.count - 1)/\(content.count)")],
                    body: content.subdata(in: start..<content.count))
            }
            served.append(200)
            // The connection closes part-way, after the first 150,000 bytes of the announced
            // length. (Not a stall ended by a short timeout: on a loaded machine the same
            // timeout also ended the resumed download. Not a reset either: Linux drops the bytes
            // a reset overtakes.)
            var response = MockResponse(status: 200, headers: headers, body: content.prefix(150_000))
            response.fault = .wrongContentLength(declared: content.count)
            return response
        }
        let parent = scratch.file("parent")
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: false)
        let session = Session(
            configuration: .init(temporaryDirectory: parent.appendingPathComponent("org.moya.downloads-XXXXXX")))
        let provider = MoyaProvider<Remote>(session: session)
        let destination = scratch.file("resumed.bin")
        let target = Remote(mock.baseURL, "/file", task: .downloadDestination { _, _ in (destination, [.removePreviousFile]) })

        let resumeData: Data
        do throws(MoyaError) {
            _ = try await provider.request(target)
            Issue.record("the cut download succeeded")
            return
        } catch {
            resumeData = try #require(error.resumeData, "no resume data: \(error)")
        }
        let folders = try #require(Self.contents(parent))
        #expect(folders.count == 1)
        let folder = parent.appendingPathComponent(folders.first ?? "")
        #expect(Self.isPrivateFolder(folder.path, of: geteuid()))
        #expect(Self.contents(folder)?.count == 1, "the partial file is kept in the private folder")

        let response = try await provider.request(target, resumingWith: resumeData)
        #expect(response.statusCode == 206)
        #expect(try Data(contentsOf: destination) == content)
        #expect(served.values == [200, 206])
        try await session.shutdown()
        #expect(Self.contents(parent) == [])
        await mock.shutdown()
    }

    // MARK: - A folder the user configured

    /// Expects `result` to be the failure of a download refused for its folder `folder`: a
    /// ``TemporaryDirectoryError`` that `matches` accepts, whose text names the folder, has
    /// `words` and says what to do, and nothing reached the server.
    func expectRefused(
        _ result: Result<Moya.Response, MoyaError>, folder: URL, saying words: [String], matches: (TemporaryDirectoryError) -> Bool,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        guard case .failure(let error) = result else {
            Issue.record("the download was not refused", sourceLocation: sourceLocation)
            return
        }
        let underlying = error.underlyingError as? TemporaryDirectoryError
        #expect(underlying.map(matches) == true, "unexpected error \(error)", sourceLocation: sourceLocation)
        #expect(underlying?.url.path == folder.path, sourceLocation: sourceLocation)
        let text = error.localizedDescription
        for word in [folder.path, "Session.Configuration.temporaryDirectory"] + words {
            #expect(text.contains(word), "\(String(reflecting: word)) is not in the error: \(text)", sourceLocation: sourceLocation)
        }
        #expect(server.acceptedConnections == 0, "nothing was sent", sourceLocation: sourceLocation)
    }

    @Test(
        "A configured folder that another user owns, directly or through a link, fails the download before anything is sent",
        .enabled(if: DownloadFolderTests.isRoot, "needs root, to give a folder to another user (chown)"))
    func foreignFolderRefused() async throws {
        let nobody = try Self.nobody()
        let taken = scratch.file("taken")
        try FileManager.default.createDirectory(at: taken, withIntermediateDirectories: false)
        #expect(chown(taken.path, nobody.uid, nobody.gid) == 0)
        let session = Session(configuration: .init(temporaryDirectory: taken))
        let (result, _) = await download(session)
        expectRefused(result, folder: taken, saying: ["nobody"]) { $0 == .ownedByAnotherUser($0.url, owner: UInt32(nobody.uid)) }
        #expect(Self.contents(taken) == [], "nothing of ours is in the other user's folder")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("file.bin").path))

        let link = scratch.file("link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: taken.path)
        #expect(lchown(link.path, nobody.uid, nobody.gid) == 0)
        let linked = Session(configuration: .init(temporaryDirectory: link))
        let (linkedResult, _) = await download(linked)
        expectRefused(linkedResult, folder: link, saying: ["symbolic link"]) { $0 == .symbolicLink($0.url) }
        #expect(Self.contents(taken) == [])
        try await session.shutdown()
        try await linked.shutdown()
    }

    @Test("A configured folder that is a link, that others may write to, or that is a file, fails the download before anything is sent")
    func unsafeFolderRefused() async throws {
        // A link to a folder of our own is not followed either.
        let own = scratch.file("own")
        try FileManager.default.createDirectory(at: own, withIntermediateDirectories: false)
        let link = scratch.file("link")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: own.path)
        let linked = Session(configuration: .init(temporaryDirectory: link))
        expectRefused(await download(linked).0, folder: link, saying: ["symbolic link"]) { $0 == .symbolicLink($0.url) }
        #expect(Self.contents(own) == [])

        let open = scratch.file("open")
        try FileManager.default.createDirectory(at: open, withIntermediateDirectories: false)
        #expect(chmod(open.path, 0o777) == 0)
        let openSession = Session(configuration: .init(temporaryDirectory: open))
        expectRefused(await download(openSession).0, folder: open, saying: ["0777", "chmod go-w"]) {
            $0 == .writableByOthers($0.url, permissions: 0o777)
        }
        #expect(Self.contents(open) == [])

        let file = scratch.file("plain-file")
        try Data("x".utf8).write(to: file)
        let fileSession = Session(configuration: .init(temporaryDirectory: file))
        expectRefused(await download(fileSession).0, folder: file, saying: ["not a directory"]) { $0 == .notADirectory($0.url) }

        for session in [linked, openSession, fileSession] {
            try await session.shutdown()
        }
    }

    @Test("A configured folder of ours is used as it is: created 0700 when missing, kept after shutdown; a sticky shared one is accepted")
    func configuredFolderUsed() async throws {
        let missing = scratch.file("made/here")
        let session = Session(configuration: .init(temporaryDirectory: missing))
        let (result, seen) = await download(session)
        #expect(throws: Never.self) { try result.get() }
        #expect(seen.map { URL(fileURLWithPath: $0).standardizedFileURL.path } == missing.standardizedFileURL.path)
        #expect(Self.isPrivateFolder(missing.path, of: geteuid()), "a missing folder is created 0700")
        try await session.shutdown()
        #expect(Self.contents(missing) == [], "kept, empty, after shutdown")

        let sticky = scratch.file("sticky")
        try FileManager.default.createDirectory(at: sticky, withIntermediateDirectories: false)
        #expect(chmod(sticky.path, 0o1777) == 0)
        let stickySession = Session(configuration: .init(temporaryDirectory: sticky))
        let (stickyResult, stickySeen) = await download(stickySession, as: "sticky.bin")
        #expect(throws: Never.self) { try stickyResult.get() }
        #expect(stickySeen.map { URL(fileURLWithPath: $0).standardizedFileURL.path } == sticky.standardizedFileURL.path)
        try await stickySession.shutdown()
    }

    // MARK: - Two users

    /// `MoyaDownloader`, built beside the test bundle.
    static func downloader() throws -> URL {
        try BuiltProgram.locate("MoyaDownloader")
    }

    /// `MoyaDownloader`'s report (see `Sources/MoyaDownloader/main.swift`).
    struct Report: Decodable {
        var uid: UInt32
        var succeeded: Bool
        var error: String?
        var folder: String?
        var folderOwner: UInt32?
        var folderMode: UInt32?
        var bytesVerified: Bool
        var folderRemoved: Bool
    }

    @Test(
        "Two users download at once with the default folder: both succeed, each in a private folder of their own",
        .enabled(if: DownloadFolderTests.isRoot, "needs root, to run a second download as the user nobody"),
        .disabled(if: DownloadFolderTests.isSanitizerRun, "a sanitized child that drops to nobody hung CI's AddressSanitizer run; the plain run covers it"))
    func twoUsers() async throws {
        let nobody = try Self.nobody()
        let executable = try Self.downloader()
        // Root downloads first, as the first user of the machine would.
        let session = Session()
        let (first, seen) = await download(session, as: "first.bin")
        #expect(throws: Never.self) { try first.get() }
        let folder = try #require(seen)
        #expect(Self.isPrivateFolder(folder, of: 0))

        // Then nobody, in another process, while root downloads again.
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = nil
        async let child = ChildProcess.run(
            executable: executable.path, arguments: [server.baseURL.absoluteString, "300000", "own", "\(nobody.uid)", "\(nobody.gid)"],
            environment: environment)
        let (second, secondFolder) = await download(session, count: 300_000, as: "second.bin")
        #expect(throws: Never.self) { try second.get() }
        #expect(secondFolder == folder)

        let (termination, output) = try await child
        #expect(termination == .exited(0))
        let report = try JSONDecoder().decode(Report.self, from: output)
        #expect(report.uid == nobody.uid)
        #expect(report.succeeded, "nobody's download failed: \(report.error ?? "")")
        #expect(report.bytesVerified)
        let otherFolder = try #require(report.folder)
        #expect(otherFolder != folder)
        #expect(report.folderOwner == nobody.uid)
        #expect(report.folderMode.map { $0 & 0o7777 } == 0o700)
        #expect(report.folderRemoved, "nobody's folder is removed when its session shuts down")
        #expect(Self.isPrivateFolder(folder, of: 0), "root's folder is untouched")
        try await session.shutdown()
        #expect(Self.status(folder) == nil)
    }

    /// Whether this is one of CI's sanitizer runs, which set their runtime's options.
    static let isSanitizerRun =
        ProcessInfo.processInfo.environment["ASAN_OPTIONS"] != nil
        || ProcessInfo.processInfo.environment["TSAN_OPTIONS"] != nil

    @Test("The shared session's folder, which no shutdown removes, is removed when the process exits")
    func sharedFolderRemovedAtExit() async throws {
        // The program calls exit() with the shared session running and its top-level values
        // alive, as programs do, and LeakSanitizer then reports its own report's bytes (exit
        // status 1). Leaks are looked for in this process, and in the child of the two-user
        // test, which shuts its session down and returns.
        var environment = ProcessInfo.processInfo.environment
        if let options = environment["ASAN_OPTIONS"] {
            environment["ASAN_OPTIONS"] = options + ":detect_leaks=0"
        }
        let (termination, output) = try await ChildProcess.run(
            executable: try Self.downloader().path, arguments: [server.baseURL.absoluteString, "50000", "shared"],
            environment: environment)
        #expect(termination == .exited(0))
        let report = try JSONDecoder().decode(Report.self, from: output)
        #expect(report.succeeded, "the download failed: \(report.error ?? "")")
        #expect(report.bytesVerified)
        let folder = try #require(report.folder)
        #expect(report.folderMode.map { $0 & 0o7777 } == 0o700)
        #expect(Self.status(folder) == nil, "the folder is gone once the process has exited")
    }
}
