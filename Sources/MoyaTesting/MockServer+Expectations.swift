import Foundation
import Testing

extension MockServer {
    /// Expects that exactly `count` of the requests received so far match, and records a Swift
    /// Testing issue that shows each request's differences when they do not.
    ///
    /// Each given part must match: the method, the path (without the query), each item of
    /// `query` (other items may be present), each header of `headers` (any case; other headers
    /// may be present) and the body. Requests that arrive later are not seen: when the client
    /// sends in the background, ``waitForRequests(count:timeout:)`` first.
    ///
    /// ```swift
    /// let server = try await MockServer.start()
    /// server.enqueue(.json(#"{"id": 7, "name": "Ann"}"#, status: 201))
    /// _ = try await MoyaProvider<UserAPI>().request(.create(NewUser(name: "Ann"), baseURL: server.baseURL))
    /// server.expectRequest(
    ///     "POST", "/users",
    ///     headers: ["Authorization": "Bearer t0k3n"],
    ///     body: .json(#"{"name": "Ann"}"#)
    /// )
    /// ```
    ///
    /// A failure reads, for example:
    ///
    /// ```
    /// Expected 1 request POST /users with header Authorization: "Bearer t0k3n" and a JSON body;
    /// 0 of 1 received match:
    ///   #1 POST /users: $.name: expected "Ann", got "Bob"
    /// ```
    ///
    /// - Returns: The matching requests, for further checks.
    @discardableResult
    public func expectRequest(
        _ method: String,
        _ path: String,
        query: [String: String] = [:],
        headers: [String: String] = [:],
        body: ExpectedBody? = nil,
        count: Int = 1,
        sourceLocation: SourceLocation = #_sourceLocation
    ) -> [MockRequest] {
        let expectation = RequestExpectation(method: method, path: path, query: query, headers: headers, body: body)
        let received = self.requests
        let matching = received.filter { expectation.differences(from: $0).isEmpty }
        if matching.count != count {
            Issue.record(Comment(rawValue: expectation.failureMessage(count: count, received: received)), sourceLocation: sourceLocation)
        }
        return matching
    }

    /// Expects that no request arrived that no route, queued response or default response
    /// answered, listing them when some did.
    public func expectNoUnansweredRequests(sourceLocation: SourceLocation = #_sourceLocation) {
        let unanswered = self.unansweredRequests
        guard !unanswered.isEmpty else { return }
        let list = unanswered.map { "  \($0)" }.joined(separator: "\n")
        Issue.record(Comment(rawValue: "\(unanswered.count) request(s) found nothing scripted:\n\(list)"), sourceLocation: sourceLocation)
    }
}

/// What ``MockServer/expectRequest(_:_:query:headers:body:count:sourceLocation:)`` looks for.
struct RequestExpectation {
    var method: String
    var path: String
    var query: [String: String]
    var headers: [String: String]
    var body: ExpectedBody?

    /// How `request` differs from the expectation; empty when it matches.
    func differences(from request: MockRequest) -> [String] {
        var differences: [String] = []
        if request.method.caseInsensitiveCompare(self.method) != .orderedSame {
            differences.append("method: expected \(self.method), got \(request.method)")
        }
        if request.path != self.path {
            differences.append("path: expected \(self.path), got \(request.path)")
        }
        for (name, value) in self.query.sorted(by: { $0.key < $1.key }) {
            let values = request.queryItems.filter { $0.name == name }.map { $0.value ?? "" }
            if values.isEmpty {
                differences.append("query item \(name): expected \(quoted(value)), missing")
            } else if !values.contains(value) {
                differences.append("query item \(name): expected \(quoted(value)), got \(values.map(quoted).joined(separator: ", "))")
            }
        }
        for (name, value) in self.headers.sorted(by: { $0.key < $1.key }) {
            let values = request.headerValues(name)
            if values.isEmpty {
                differences.append("header \(name): expected \(quoted(value)), missing")
            } else if !values.contains(value) {
                differences.append("header \(name): expected \(quoted(value)), got \(values.map(quoted).joined(separator: ", "))")
            }
        }
        if let body = self.body {
            differences += body.differences(from: request)
        }
        return differences
    }

    /// The message of a failed expectation: what was expected, and how each request differs.
    func failureMessage(count: Int, received: [MockRequest]) -> String {
        var wanted = "\(count) request\(count == 1 ? "" : "s") \(self.method) \(self.path)"
        var parts: [String] = []
        if !self.query.isEmpty {
            parts.append("query " + self.query.sorted { $0.key < $1.key }.map { "\($0.key)=\(quoted($0.value))" }.joined(separator: ", "))
        }
        for (name, value) in self.headers.sorted(by: { $0.key < $1.key }) {
            parts.append("header \(name): \(quoted(value))")
        }
        switch self.body {
        case .json: parts.append("a JSON body")
        case .text, .bytes: parts.append("a body")
        case .form: parts.append("form fields")
        case .empty: parts.append("no body")
        case nil: break
        }
        if !parts.isEmpty { wanted += " with " + parts.joined(separator: " and ") }
        let matching = received.filter { self.differences(from: $0).isEmpty }.count
        var message = "Expected \(wanted); \(matching) of \(received.count) received match"
        if received.isEmpty { return message + " (no request arrived)" }
        message += ":"
        for request in received.suffix(20) {
            let differences = self.differences(from: request)
            let summary = differences.isEmpty ? "matches" : differences.joined(separator: "; ")
            message += "\n  #\(request.number) \(request.method) \(request.path): \(summary)"
        }
        if received.count > 20 { message += "\n  (only the last 20 of \(received.count) are shown)" }
        return message
    }
}
