import Moya
import NIOConcurrencyHelpers

/// The answers a ``MockServer`` was scripted with: its routes, its queue of responses and its
/// default response, behind one lock.
final class ResponseScript: Sendable {
    /// What answers a matched route.
    enum Responder: Sendable {
        /// The same response every time.
        case fixed(MockResponse)
        /// A closure, called for each request.
        case handler(@Sendable (MockRequest) async throws -> MockResponse)
    }

    /// A route: a method (or any) and a path (exact, or a prefix when it ends in `*`).
    struct Route: Sendable {
        var method: String?
        var path: String
        var responder: Responder

        func matches(method: String, path: String) -> Bool {
            if let expected = self.method, expected.caseInsensitiveCompare(method) != .orderedSame {
                return false
            }
            if self.path.hasSuffix("*") {
                return path.hasPrefix(self.path.dropLast())
            }
            return path == self.path
        }
    }

    /// What the server does with a request.
    enum Decision: Sendable {
        case respond(Responder)
        /// Nothing was scripted for it.
        case unscripted
    }

    /// A WebSocket route: a path (exact, or a prefix when it ends in `*`) and its script.
    struct WebSocketRoute: Sendable {
        var path: String
        var script: WebSocketScript

        func matches(path: String) -> Bool {
            Route(method: nil, path: self.path, responder: .fixed(.text(""))).matches(method: "GET", path: path)
        }
    }

    private struct State {
        var routes: [Route] = []
        var webSocketRoutes: [WebSocketRoute] = []
        var queue: [MockResponse] = []
        var queueStart = 0
        var defaultResponse: MockResponse?
    }

    private let state = NIOLockedValueBox(State())

    func addRoute(_ route: Route) {
        self.state.withLockedValue { $0.routes.append(route) }
    }

    func removeRoutes() {
        self.state.withLockedValue { state in
            state.routes.removeAll()
            state.webSocketRoutes.removeAll()
        }
    }

    func addWebSocketRoute(_ route: WebSocketRoute) {
        self.state.withLockedValue { $0.webSocketRoutes.append(route) }
    }

    /// The script of the last WebSocket route that matches `path`, if any.
    func webSocketScript(for path: String) -> WebSocketScript? {
        self.state.withLockedValue { state in
            state.webSocketRoutes.last(where: { $0.matches(path: path) })?.script
        }
    }

    func enqueue(_ responses: [MockResponse]) {
        self.state.withLockedValue { $0.queue.append(contentsOf: responses) }
    }

    var queuedCount: Int {
        self.state.withLockedValue { $0.queue.count - $0.queueStart }
    }

    var defaultResponse: MockResponse? {
        get { self.state.withLockedValue { $0.defaultResponse } }
        set { self.state.withLockedValue { $0.defaultResponse = newValue } }
    }

    /// Whether anything scripted would answer `method` `path` (a route, the queue or the
    /// default response), without taking from the queue.
    func hasAnswer(method: String, path: String) -> Bool {
        self.state.withLockedValue { state in
            state.routes.contains { $0.matches(method: method, path: path) }
                || state.queueStart < state.queue.count
                || state.defaultResponse != nil
        }
    }

    /// The answer for a request, taking a response from the queue when that is what answers.
    func decide(method: String, path: String) -> Decision {
        self.state.withLockedValue { state in
            if let route = state.routes.last(where: { $0.matches(method: method, path: path) }) {
                return .respond(route.responder)
            }
            if state.queueStart < state.queue.count {
                let response = state.queue[state.queueStart]
                state.queueStart += 1
                if state.queueStart == state.queue.count {
                    state.queue.removeAll()
                    state.queueStart = 0
                }
                return .respond(.fixed(response))
            }
            if let fallback = state.defaultResponse {
                return .respond(.fixed(fallback))
            }
            return .unscripted
        }
    }
}
