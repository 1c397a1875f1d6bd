import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// What the download suites share: a test server, a destination directory, a staging directory
/// where the provider's session keeps partial downloads (checked to be empty after a test), and
/// that provider. The session and the server are shut down when the fixture is released.
final class DownloadFixture: Sendable {
    let server: TestServer
    let directory: TemporaryDirectory
    let staging: TemporaryDirectory
    let session: Session
    let provider: MoyaProvider<ServerTarget>

    init() throws {
        server = try TestServer.start()
        directory = try TemporaryDirectory()
        staging = try TemporaryDirectory()
        session = Session(configuration: .init(temporaryDirectory: staging.url))
        provider = MoyaProvider<ServerTarget>(session: session)
    }

    deinit {
        #expect(throws: Never.self) { try session.syncShutdown() }
        #expect(throws: Never.self) { try server.shutdown() }
    }
}
