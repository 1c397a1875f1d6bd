import Foundation
import MoyaTestServer
import Testing

@testable import Moya

/// What the download suites share: a test server, a destination directory, a staging directory
/// where the provider's session keeps partial downloads (checked to be empty after a test), and
/// that provider. The session and the server close themselves, without blocking, when the
/// fixture is released (their `deinit`s).
final class DownloadFixture: Sendable {
    let server: TestServer
    let directory: TemporaryDirectory
    let staging: TemporaryDirectory
    let session: Session
    let provider: MoyaProvider<Remote>

    init() async throws {
        server = try await TestServer.start()
        directory = try TemporaryDirectory()
        staging = try TemporaryDirectory()
        session = Session(configuration: .init(temporaryDirectory: staging.url))
        provider = MoyaProvider<Remote>(session: session)
    }
}

/// A suite on a `DownloadFixture`, which it makes in its `init`, with the fixture's parts by name.
protocol DownloadSuite {
    var fixture: DownloadFixture { get }
}

extension DownloadSuite {
    var server: TestServer { fixture.server }
    var directory: TemporaryDirectory { fixture.directory }
    /// Where the provider's session keeps partial downloads: checked to be empty after each test.
    var staging: TemporaryDirectory { fixture.staging }
    var session: Session { fixture.session }
    var provider: MoyaProvider<Remote> { fixture.provider }
    var base: URL { server.baseURL }
}
