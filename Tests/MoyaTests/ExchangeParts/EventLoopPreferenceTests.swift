import AsyncHTTPClient
import Foundation
import MoyaTestServer
import MoyaTesting
import NIOCore
import NIOPosix
import Testing

@testable import Moya

/// Which loop an attempt's delegate asks for: the session's own when the request is alone in
/// flight (so that its pooled connection and its delegate share a thread), AsyncHTTPClient's
/// choice otherwise.
@Suite("A request alone in flight runs on the session's own event loop")
struct EventLoopPreferenceTests {
    private static func asksForSoloLoop(_ session: Session) -> Bool {
        session.parts.placement.loneRequestLoop().map { $0 === session.parts.placement.soloEventLoop } ?? false
    }

    @Test("Idle: the session's loop; with requests in flight, or on an event loop, AsyncHTTPClient chooses", arguments: [false, true])
    func preference(shared: Bool) async throws {
        let session = shared ? Session.default : Session()
        if shared {
            // Other tests send through the shared session meanwhile: its answer is read only when
            // nothing was in flight just before and just after. To be wrong then, a whole exchange
            // would have to start and end between the two readings, which takes far longer.
            var asks: Bool?
            let idle = await eventually(within: 30) {
                let before = session.parts.inFlight.count
                let answer = Self.asksForSoloLoop(session)
                guard before == 0, session.parts.inFlight.count == 0 else { return false }
                asks = answer
                return true
            }
            #expect(idle, "the shared session was never idle for 30 seconds")
            #expect(asks == true)
        } else {
            #expect(Self.asksForSoloLoop(session))
        }
        let onLoop = try await MultiThreadedEventLoopGroup.singleton.any().submit { Self.asksForSoloLoop(session) }.get()
        #expect(!onLoop, "a request made on an event loop stays there")
        if !shared {
            // Two exchanges in flight.
            #expect(session.parts.inFlight.enter() == nil)
            #expect(session.parts.inFlight.enter() == nil)
            #expect(!Self.asksForSoloLoop(session))
            session.parts.inFlight.ended()
            #expect(Self.asksForSoloLoop(session))
            session.parts.inFlight.ended()
            try await session.shutdown()
        }
    }

    @Test("Requests one after another on the session's loop all succeed, and the count of those in flight returns to zero")
    func sequentialRequests() async throws {
        let mock = try await MockServer.start()
        mock.route("GET", "/", response: MockResponse(status: 200, body: Data("ok".utf8)))
        let session = Session()
        let provider = MoyaProvider<MultiTarget>(session: session)
        struct Root: TargetType {
            let baseURL: URL
            var path: String { "/" }
            var method: Moya.Method { .get }
            var task: Moya.Task { .requestPlain }
            var headers: [String: String]? { nil }
        }
        for _ in 0..<20 {
            let response = try await provider.request(.target(Root(baseURL: mock.baseURL)))
            #expect(response.data == Data("ok".utf8))
        }
        #expect(session.parts.inFlight.count == 0, "every exchange that started was counted as ended")
        try await session.shutdown()
        await mock.shutdown()
    }
}
