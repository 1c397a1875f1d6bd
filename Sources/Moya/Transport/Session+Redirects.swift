import AsyncHTTPClient
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The next request of a redirect the session follows.
struct RedirectStep {
    /// The request to send: the redirect's URL, with the method, body and headers changed as
    /// AsyncHTTPClient (and browsers) change them.
    var request: URLRequest
    /// The URL redirected to, absolute.
    var target: URL
    /// Whether the method became `GET` and the body was dropped; a streamed body goes too.
    var dropsBody: Bool
    /// Whether the target is another origin: the ``credentialHeaders`` were removed from the
    /// request, and those of the session and an `Authorization` set by the transport (a
    /// challenge answer) must not be sent either, on this hop and the ones after it.
    var crossesOrigin: Bool

    /// The headers not sent to another origin than the request's.
    static let credentialHeaders = ["Origin", "Cookie", "Authorization", "Proxy-Authorization"]
}

extension Session {
    /// Whether the session follows a `Location` with this status: `301`, `302`, `303`, `307`
    /// and `308`.
    static func isRedirectStatus(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: return true
        default: return false
        }
    }

    /// Whether the ``Configuration/redirectPolicy`` follows redirects.
    var followsRedirects: Bool {
        if case .follow = configuration.redirectPolicy { return true }
        return false
    }

    /// The request to send after `response` to `request`, when the response is a redirect that
    /// the session's ``Configuration/redirectPolicy`` follows; `nil` when it is the result.
    ///
    /// The session follows redirects itself instead of letting AsyncHTTPClient do it: every hop
    /// then goes through ``makeClientRequest(_:authorization:body:route:socketPath:crossedOrigin:)`` like the
    /// first one, so a `Location` with a port out of range fails with a clear error (in
    /// AsyncHTTPClient, it traps), and with a ``ServerTrustManager`` every hop is routed and
    /// evaluated for its own host.
    ///
    /// The method becomes `GET` and the body is dropped after a `303` (except for `HEAD`), and
    /// after a `301` or `302` to a `POST`; `Origin`, `Cookie`, `Authorization` and
    /// `Proxy-Authorization` are removed when the target is another origin (those of the
    /// session's ``Configuration/headers`` too: see
    /// ``makeClientRequest(_:authorization:body:route:socketPath:crossedOrigin:)``). A redirect to a
    /// scheme other than `http` or `https` is not followed: the redirect response is the result.
    ///
    /// - Parameters:
    ///   - response:         The response.
    ///   - request:          The request it answers.
    ///   - bodyIsReplayable: Whether the request's body can be sent again.
    /// - Throws: ``NonReplayableBodyError`` for a redirect that keeps the body (a `307` or
    ///   `308`, say) when the body cannot be sent again: a one-shot stream that was read.
    func redirectStep(after response: TransportResponse, of request: URLRequest, bodyIsReplayable: Bool) throws -> RedirectStep? {
        // Checked first: it is what almost every response stops at.
        guard Session.isRedirectStatus(response.statusCode),
            case .follow = configuration.redirectPolicy,
            let location = response.httpResponse?.value(forHTTPHeaderField: "Location"),
            let current = request.url,
            let target = URL(string: location, relativeTo: current)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else {
            return nil
        }
        let status = response.statusCode
        let method = request.httpMethod?.uppercased() ?? "GET"
        let convertsToGet = (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST")
        if !convertsToGet, !bodyIsReplayable {
            throw NonReplayableBodyError(reason: .redirect(statusCode: status, location: target))
        }
        var next = request
        next.url = target
        if convertsToGet {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            next.setValue(nil, forHTTPHeaderField: "Content-Length")
            next.setValue(nil, forHTTPHeaderField: "Content-Type")
        }
        let sameOrigin = URLOrigin.same(current, target)
        if !sameOrigin {
            for name in RedirectStep.credentialHeaders {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return RedirectStep(request: next, target: target, dropsBody: convertsToGet, crossesOrigin: !sameOrigin)
    }

    /// Records the hop to `target` in `visited`, the URLs visited so far (empty before the
    /// first redirect, when `first`, the URL of the original request, is added).
    ///
    /// - Throws: `HTTPClientError.redirectLimitReached` beyond the policy's maximum, and
    ///   `HTTPClientError.redirectCycleDetected` for a URL already visited when the policy
    ///   does not allow cycles.
    func recordRedirect(to target: URL, after first: URL?, visited: inout [String]) throws {
        guard case .follow(let max, let allowCycles) = configuration.redirectPolicy else { return }
        if visited.isEmpty { visited = [first?.absoluteString ?? ""] }
        guard visited.count <= max else { throw HTTPClientError.redirectLimitReached }
        guard allowCycles || !visited.contains(target.absoluteString) else { throw HTTPClientError.redirectCycleDetected }
        visited.append(target.absoluteString)
    }
}
