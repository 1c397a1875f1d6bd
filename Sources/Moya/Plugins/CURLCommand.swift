import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Builds the cURL command line that reproduces a request, one option per line.
enum CURLCommand {
    static let separator = " \\\n\t"

    /// The command for `request`, or `"$ curl command could not be created"` when it has no URL,
    /// host or method.
    ///
    /// - Parameters:
    ///   - request:        The request.
    ///   - sessionHeaders: Headers the session adds; the request's own headers win.
    ///   - credential:     Credentials attached to the request, written as `-u user:password`.
    ///   - redaction:      What to hide (the logger's); nothing by default.
    static func describe(
        request: URLRequest?,
        sessionHeaders: [String: String],
        credential: URLCredential?,
        redaction: NetworkLoggerPlugin.Configuration.Redaction = .disabled
    ) -> String {
        guard let request = request,
            let url = request.url,
            url.host != nil,
            let method = request.httpMethod
        else {
            return "$ curl command could not be created"
        }

        var components = ["$ curl -v", "-X \(method)"]

        if let user = credential?.user, let password = credential?.password {
            components.append("-u \(quoted("\(user):\(redaction.password(password))"))")
        }

        for (name, value) in mergedHeaders(sessionHeaders: sessionHeaders, requestHeaders: request.allHTTPHeaderFields ?? [:]) {
            components.append("-H \(quoted("\(name): \(redaction.value(value, forHeader: name))"))")
        }

        if let body = request.httpBody, !body.isEmpty {
            let shown = redaction.redactingBody(body, contentType: request.value(forHTTPHeaderField: "Content-Type"))
            components.append("-d \(quoted(String(decoding: shown, as: UTF8.self)))")
        }

        components.append(quoted(redaction.describe(url)))
        return components.joined(separator: separator)
    }

    /// Session headers then request headers, merged case-insensitively (the request wins), with
    /// `Cookie` left out, sorted by name so the output is stable.
    static func mergedHeaders(sessionHeaders: [String: String], requestHeaders: [String: String]) -> [(String, String)] {
        var merged: [String: (String, String)] = [:]
        for (name, value) in sessionHeaders { merged[name.lowercased()] = (name, value) }
        for (name, value) in requestHeaders { merged[name.lowercased()] = (name, value) }
        merged.removeValue(forKey: "cookie")
        return merged.values.sorted { $0.0.lowercased() < $1.0.lowercased() }
    }

    /// Wraps `string` in double quotes for a POSIX shell, escaping `\`, `"`, `$` and `` ` ``.
    static func quoted(_ string: String) -> String {
        var result = "\""
        for character in string {
            switch character {
            case "\\", "\"", "$", "`": result.append("\\")
            default: break
            }
            result.append(character)
        }
        result.append("\"")
        return result
    }
}
