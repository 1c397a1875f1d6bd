import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(Glibc)
import Glibc
#endif

/// The private download folders of processes that died without removing theirs (a download
/// interrupted by SIGKILL, SIGINT or SIGTERM) are removed by the next session that starts; those
/// of live processes are not.
@Suite("Stale download folders")
struct StaleDownloadFolderTests {
    /// A folder of its own for the test, holding the folders a sweep looks at.
    let parent: String

    init() throws {
        parent = FileManager.default.temporaryDirectory.appendingPathComponent("moya-stale-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
    }

    /// A private folder as a session makes one, with a 4 MiB partial download in it, and its
    /// marker; `holder` names a process to keep the marker's lock while it runs.
    func makeFolder(_ suffix: String, marker: Bool = true) throws -> String {
        let path = "\(parent)/org.moya.downloads-\(suffix)"
        #expect(mkdir(path, 0o700) == 0)
        try Data(count: 4 << 20).write(to: URL(fileURLWithPath: "\(path)/CFNetworkDownload_\(suffix).tmp"))
        if marker {
            #expect(FileManager.default.createFile(atPath: "\(path)/\(DownloadFolderOwner.markerName)", contents: nil, attributes: [.posixPermissions: 0o600]))
        }
        return path
    }

    /// Runs `/usr/bin/flock` on `folder`'s marker with `command`, as another process would hold
    /// it.
    func lockMarker(of folder: String, running command: [String], input: Pipe? = nil) throws -> Process {
        let process = Process()
        if let input { process.standardInput = input }
        process.executableURL = URL(fileURLWithPath: "/usr/bin/flock")
        process.arguments = ["--exclusive", "\(folder)/\(DownloadFolderOwner.markerName)"] + command
        try process.run()
        return process
    }

    func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    /// Sets `path`'s modification time `seconds` back.
    func age(_ path: String, by seconds: TimeInterval) throws {
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-seconds)], ofItemAtPath: path)
    }

    @Test(
        "A session that starts removes the folders no live process owns: a dead owner's, an old one without a marker; it keeps a live process's, a new one, and anything not its own",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/flock")))
    func sessionStartRemovesStaleFolders() async throws {
        // A process that locked its folder and died (the system let go of its lock).
        let dead = try makeFolder("dead01")
        let died = try lockMarker(of: dead, running: ["/bin/true"])
        died.waitUntilExit()
        // A process that is alive and holds its lock.
        let live = try makeFolder("live01")
        // It holds the lock until its input closes (a signal to flock would not reach the
        // command it runs).
        let input = Pipe()
        let holder = try lockMarker(of: live, running: ["/bin/cat"], input: input)
        defer {
            try? input.fileHandleForWriting.close()
            holder.waitUntilExit()
        }
        // The holder takes the lock before the session starts.
        #expect(await eventually { DownloadFolderOwner.isHeld(live) })
        // Without a marker: made by an older version long ago, or being made right now.
        let old = try makeFolder("old001", marker: false)
        try age(old, by: 3600)
        let fresh = try makeFolder("new001", marker: false)
        // Not ours to touch: another name, a link with a folder's name, a folder others may
        // enter.
        let other = "\(parent)/org.moya.other-abcdef"
        #expect(mkdir(other, 0o700) == 0)
        let target = try makeFolder("target", marker: true)
        try age(target, by: 3600)
        let link = "\(parent)/org.moya.downloads-link01"
        #expect(symlink(target, link) == 0)
        let open = "\(parent)/org.moya.downloads-open01"
        #expect(mkdir(open, 0o755) == 0)
        #expect(chmod(open, 0o755) == 0)
        try age(open, by: 3600)

        let session = Session(configuration: .init(temporaryDirectory: URL(fileURLWithPath: "\(parent)/\(DownloadFolder.templateName)")))
        #expect(await eventually { !exists(dead) && !exists(old) })
        try await session.shutdown()
        #expect(exists(live) && exists("\(live)/CFNetworkDownload_live01.tmp"), "a live process's folder stays whole")
        #expect(exists(fresh), "a folder without a marker is left alone for the grace period")
        #expect(exists(other) && exists(link) && exists(open))
        #expect(!exists(target), "the target folder itself is stale (its marker is held by nobody); the link to it is kept")
        try? FileManager.default.removeItem(atPath: parent)
    }

    @Test("A session's own folder is held while it lives: a sweep by another session keeps it; after shutdown it is gone")
    func ownFolderIsHeld() async throws {
        let template = URL(fileURLWithPath: "\(parent)/\(DownloadFolder.templateName)")
        let folder = DownloadFolder(template)
        let made = try folder.prepare()
        #expect(DownloadFolderOwner.isHeld(made.path))
        try age(made.path, by: 3600)
        #expect(DownloadFolderOwner.removeStale(in: parent).isEmpty)
        #expect(exists(made.path))
        folder.remove()
        #expect(!exists(made.path))
        try? FileManager.default.removeItem(atPath: parent)
    }

    @Test("A sweep running while sessions make their folders never removes one being made: the marker appears already locked")
    func sweepDuringMaking() async throws {
        let template = URL(fileURLWithPath: "\(parent)/\(DownloadFolder.templateName)")
        let stop = Protected(false)
        let parent = self.parent
        let sweeper = Thread {
            while !stop.current { DownloadFolderOwner.removeStale(in: parent) }
        }
        sweeper.start()
        var folders: [DownloadFolder] = []
        var lost: [String] = []
        for _ in 0..<400 {
            let folder = DownloadFolder(template)
            let made = try folder.prepare()
            folders.append(folder)
            if !exists("\(made.path)/\(DownloadFolderOwner.markerName)") || !DownloadFolderOwner.isHeld(made.path) { lost.append(made.path) }
        }
        stop.withLock { $0 = true }
        let survivors = folders.compactMap(\.current).filter { exists($0.path) && DownloadFolderOwner.isHeld($0.path) }
        #expect(lost.isEmpty)
        #expect(survivors.count == folders.count)
        for folder in folders { folder.remove() }
        try? FileManager.default.removeItem(atPath: parent)
    }
}
