import Foundation

extension ProxyEnvironment {
    /// Parses a proxy variable's value, `[scheme://][user[:password]@]host[:port][/]`, as curl
    /// does: no scheme means `http`; `http` is an HTTP proxy, `socks5` and `socks5h` a SOCKS5
    /// one (the transport always lets the proxy resolve names); the port defaults to 1080; the
    /// user name and password are percent-decoded; an IPv6 host is in brackets (and comes back
    /// without them). Errors name `variable`, never the value.
    static func parseProxy(_ value: String, variable: String) -> Result<SessionProxy, ProxyEnvironmentError> {
        func failure(_ reason: ProxyEnvironmentError.Reason) -> Result<SessionProxy, ProxyEnvironmentError> {
            .failure(ProxyEnvironmentError(variable: variable, reason: reason))
        }

        var rest = value[...]
        var scheme = "http"
        if let separator = rest.range(of: "://") {
            let name = rest[..<separator.lowerBound]
            guard isScheme(name) else { return failure(.malformed) }
            scheme = name.lowercased()
            rest = rest[separator.upperBound...]
        }
        let isSOCKS: Bool
        switch scheme {
        case "http":
            isSOCKS = false
        case "socks5", "socks5h":
            isSOCKS = true
        default:
            return failure(.unsupportedScheme(scheme))
        }

        // The authority ends at the first "/", "?" or "#"; only a lone "/" may follow it.
        if let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) {
            guard rest[end...] == "/" else { return failure(.unexpectedPath) }
            rest = rest[..<end]
        }

        var username: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let user: Substring
            var secret: Substring?
            if let colon = userInfo.firstIndex(of: ":") {
                user = userInfo[..<colon]
                secret = userInfo[userInfo.index(after: colon)...]
            } else {
                user = userInfo
            }
            guard let decodedUser = decodeCredential(user) else { return failure(.invalidCredentials) }
            var decodedPassword: String?
            if let secret {
                guard let decoded = decodeCredential(secret) else { return failure(.invalidCredentials) }
                decodedPassword = decoded
            }
            // "@host" and ":@host" carry no credentials.
            if !decodedUser.isEmpty || !(decodedPassword ?? "").isEmpty {
                username = decodedUser
                password = decodedPassword
            }
        }

        let host: String
        var portText: Substring?
        if rest.first == "[" {
            guard let close = rest.firstIndex(of: "]") else { return failure(.invalidHost) }
            let address = rest[rest.index(after: rest.startIndex)..<close]
            guard let parsed = IPAddressBytes(address), !parsed.isIPv4 else { return failure(.invalidHost) }
            host = address.lowercased()
            let after = rest[rest.index(after: close)...]
            if after.first == ":" {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                return failure(.invalidHost)
            }
        } else {
            let name: Substring
            if let colon = rest.firstIndex(of: ":") {
                name = rest[..<colon]
                portText = rest[rest.index(after: colon)...]
            } else {
                name = rest
            }
            guard isHostName(name) else { return failure(.invalidHost) }
            host = name.lowercased()
        }

        var port = 1080
        if let portText {
            guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }), let parsed = Int(portText),
                (1...65535).contains(parsed)
            else { return failure(.invalidPort) }
            port = parsed
        }

        if isSOCKS {
            guard username == nil else { return failure(.socksCredentialsUnsupported) }
            return .success(.socks(host: host, port: port))
        }
        return .success(.http(host: host, port: port, username: username, password: password))
    }

    /// Whether `text` is a URL scheme: a letter, then letters, digits, `+`, `-` or `.`.
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") }
    }

    /// Whether `text` is a host name (ASCII letters, digits, `-`, `_` and `.`, not starting with
    /// a dot) or, when it has only digits and dots, a valid IPv4 address.
    private static func isHostName(_ text: Substring) -> Bool {
        guard let first = text.first, first != ".", first != "-" else { return false }
        guard text.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == ".") }) else { return false }
        if text.allSatisfy({ $0.isNumber || $0 == "." }) {
            return IPAddressBytes(text)?.isIPv4 == true
        }
        return true
    }

    /// A percent-decoded user name or password, or `nil` when the encoding is invalid or the
    /// result holds a control character (it becomes a header value).
    private static func decodeCredential(_ text: Substring) -> String? {
        guard let decoded = String(text).removingPercentEncoding else { return nil }
        guard !decoded.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return nil }
        return decoded
    }
}
