import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("Download placement never removes more than the one file, and names the cause of a failure")
struct DownloadPlacementTests: DownloadSuite {
    let fixture: DownloadFixture

    init() async throws {
        fixture = try await DownloadFixture()
    }

    private func isDirectory(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }

    @Test("A destination that resolves to a directory is never removed, even with .removePreviousFile")
    func directoryAtDestination() async throws {
        let outer = directory.file("outer")
        let inner = outer.appendingPathComponent("inner")
        try FileManager.default.createDirectory(at: inner, withIntermediateDirectories: true)
        let sibling = outer.appendingPathComponent("sibling.txt")
        try Data("sibling".utf8).write(to: sibling)

        for target in [inner.appendingPathComponent(".."), inner, URL(fileURLWithPath: inner.path + "/")] {
            let result = await send(
                provider,
                Remote(
                    base, "/bytes/100",
                    task: .downloadDestination { _, _ in
                        (target, [.removePreviousFile, .createIntermediateDirectories])
                    }))
            let error = try #require(result.error, "\(target.path) should fail")
            guard case .moveFailed(_, _, let underlying)? = error.underlyingError as? FileTransferError,
                case .isDirectory? = underlying as? FileTransferError
            else {
                Issue.record("expected moveFailed(isDirectory), got \(error)")
                continue
            }
            #expect("\(error)".contains("is a directory, and a download never replaces a directory"), "\(error)")
            #expect(isDirectory(inner))
            #expect(try Data(contentsOf: sibling) == Data("sibling".utf8))
            #expect(staging.contents.isEmpty)
        }
    }

    @Test("A symbolic link at the destination counts as a file: not replaced without .removePreviousFile")
    func danglingLinkAtDestination() async throws {
        let link = directory.file("link.bin")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: directory.file("missing-target").path)
        let result = await send(provider, Remote(base, "/bytes/100", task: .downloadDestination { _, _ in (link, []) }))
        guard case .moveFailed? = result.error?.underlyingError as? FileTransferError else {
            Issue.record("expected moveFailed, got \(result)")
            return
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link.path) == directory.file("missing-target").path)
        #expect(result.error?.errorDescription?.contains("removePreviousFile") == true, "\(String(describing: result.error))")
    }

    @Test("A move that fails names the real cause: a file where a folder should be")
    func moveFailureNamesCause() async throws {
        let blocker = directory.file("not-a-folder")
        try Data("file".utf8).write(to: blocker)
        let target = blocker.appendingPathComponent("sub/file.bin")
        let result = await send(
            provider,
            Remote(
                base, "/bytes/100",
                task: .downloadDestination { _, _ in
                    (target, [.createIntermediateDirectories])
                }))
        let error = try #require(result.error)
        guard case .moveFailed(_, let destination, _)? = error.underlyingError as? FileTransferError else {
            Issue.record("expected moveFailed, got \(error)")
            return
        }
        #expect(destination == target)
        let message = strerrorMessage(ENOTDIR)
        #expect(error.localizedDescription.contains(message), "\(error.localizedDescription)")
        #expect("\(error)".contains(message), "\(error)")
        #expect(error.localizedDescription.contains(target.path))
        #expect(!error.localizedDescription.contains("error 512"))
        #expect(try Data(contentsOf: blocker) == Data("file".utf8))
        #expect(staging.contents.isEmpty)
    }

    @Test("A move onto an existing file without .removePreviousFile says how to allow it")
    func existingFileMessage() async throws {
        let existing = directory.file("existing.bin")
        try Data("old".utf8).write(to: existing)
        let result = await send(provider, Remote(base, "/bytes/100", task: .downloadDestination { _, _ in (existing, []) }))
        let error = try #require(result.error)
        #expect("\(error)".contains("a file already exists there, and the removePreviousFile option was not given"), "\(error)")
        #expect(try Data(contentsOf: existing) == Data("old".utf8))
    }

    @Test("A pipe at the destination is not replaced, even with .removePreviousFile")
    func pipeAtDestination() async throws {
        let pipe = directory.file("pipe")
        #expect(mkfifo(pipe.path, 0o600) == 0)
        let result = await send(provider, Remote(base, "/bytes/100", task: .downloadDestination { _, _ in (pipe, [.removePreviousFile]) }))
        let error = try #require(result.error)
        guard case .moveFailed? = error.underlyingError as? FileTransferError else {
            Issue.record("expected moveFailed, got \(error)")
            return
        }
        #expect("\(error)".contains("is not a regular file or symbolic link"), "\(error)")
        var info = stat()
        #expect(lstat(pipe.path, &info) == 0)
        #expect(info.st_mode & S_IFMT == S_IFIFO, "the pipe is still there")
        #expect(staging.contents.isEmpty)
    }
}

/// The system's message for an `errno` value, such as "Not a directory".
private func strerrorMessage(_ code: Int32) -> String {
    String(cString: strerror(code))
}
