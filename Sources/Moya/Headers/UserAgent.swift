import Foundation

/// The `User-Agent` a session sends by default (see ``Session/defaultHTTPHeaders``), built from
/// what the process can find out about itself.
///
/// A program whose main bundle has no identifier (a server or a command-line tool, which is
/// every program on Linux) sends its executable's name, the operating system, the Swift version
/// Moya was compiled with, and Moya's version:
///
///     GatewayService (Debian GNU/Linux 12 bookworm; Linux 6.18.44) Swift/6.3 Moya/0.1.0
///
/// The name carries the bundle's `CFBundleShortVersionString` when there is one
/// (`GatewayService/1.4.0`); nothing is made up when there is none. On Linux the system is the
/// distribution's name (`PRETTY_NAME` in `/etc/os-release`) and the kernel's version; elsewhere
/// it is the system's name and version (`macOS 15.5.0`).
///
/// An app whose main bundle has an identifier keeps Alamofire's format, with Moya in
/// Alamofire's place:
///
///     Example/1.0 (org.alamofire.Example; build:1; iOS 17.5.0) Moya/0.1.0
///
/// Either way the value is a valid `User-Agent` (RFC 9110, section 10.1.5): product names and
/// versions keep only the characters of a token (others become `-`), and the comment loses
/// control characters, backslashes and parentheses (`Debian GNU/Linux 12 (bookworm)` becomes
/// `Debian GNU/Linux 12 bookworm`).
struct UserAgent: Equatable, Sendable {
    /// The main bundle's `Info.plist` entries that are strings; empty for a program without one.
    var bundleInfo: [String: String]
    /// The path the program was started as (`CommandLine.arguments[0]`), if any.
    var executablePath: String?
    /// The operating system as the comment shows it, such as
    /// `Debian GNU/Linux 12 (bookworm); Linux 6.18.44` or `macOS 15.5.0` (made valid when used).
    var system: String
    /// The version of the Swift compiler that built Moya, such as `6.3`.
    var swiftVersion: String

    /// The default session's value, worked out once.
    ///
    /// Outside Apple platforms it is worked out without Foundation's bundles, process
    /// information or string folding (for text that is all ASCII): a program has no bundle
    /// there, and their first use brings more than a mebibyte of Foundation's code into memory
    /// for a few dozen bytes of header.
    static let current = UserAgent(
        bundleInfo: mainBundleInfo(),
        executablePath: CommandLine.arguments.first,
        system: UserAgent.currentSystem(),
        swiftVersion: UserAgent.compilerVersion
    )

    /// The main bundle's `Info.plist` entries that are strings; none outside Apple platforms,
    /// where a program has no bundle.
    static func mainBundleInfo() -> [String: String] {
        #if canImport(Darwin)
        return (Bundle.main.infoDictionary ?? [:]).compactMapValues { $0 as? String }
        #else
        return [:]
        #endif
    }

    /// The header's value.
    var value: String {
        let moya = "Moya/\(MoyaInfo.version)"
        if let identifier = self.bundleInfo["CFBundleIdentifier"] {
            // Alamofire's format, for apps.
            let executable = self.executableName ?? "Unknown"
            let version = self.bundleInfo["CFBundleShortVersionString"].flatMap(Self.token) ?? "Unknown"
            let build = self.bundleInfo["CFBundleVersion"].map(Self.commentText) ?? "Unknown"
            let comment = [Self.commentText(identifier), "build:\(build)", Self.commentText(self.system)].joined(separator: "; ")
            return "\(executable)/\(version) (\(comment)) \(moya)"
        }
        let comment = "(\(Self.commentText(self.system)))"
        let swift = "Swift/\(Self.token(self.swiftVersion) ?? "6")"
        guard let executable = self.executableName else {
            // A `User-Agent` must start with a product.
            return "\(swift) \(comment) \(moya)"
        }
        let version = self.bundleInfo["CFBundleShortVersionString"].flatMap(Self.token).map { "/\($0)" } ?? ""
        return "\(executable)\(version) \(comment) \(swift) \(moya)"
    }

    /// The executable's name as a token: the bundle's `CFBundleExecutable`, or the last component
    /// of the path the program was started as.
    var executableName: String? {
        let name = self.bundleInfo["CFBundleExecutable"] ?? self.executablePath.map(Self.lastPathComponent)
        return name.flatMap(Self.token)
    }

    /// The last component of `path` (`/usr/bin/tool` and `/usr/bin/tool/` are `tool`); the path
    /// itself when it has none (`/`).
    static func lastPathComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    // MARK: - Making text valid

    /// `text` as a token (RFC 9110, section 5.6.2): accents dropped, and every character that is
    /// not a `tchar` replaced by `-`; `nil` when nothing is left.
    static func token(_ text: String) -> String? {
        let folded = trimmingWhitespace(withoutAccents(text))
        let scalars = folded.unicodeScalars.map { scalar -> Unicode.Scalar in
            scalar.isASCII && HTTPSyntax.isTokenCharacter(UInt8(scalar.value)) ? scalar : "-"
        }
        let token = String(String.UnicodeScalarView(scalars))
        return token.isEmpty ? nil : token
    }

    /// `text` as the inside of a comment (RFC 9110, section 5.6.5): accents dropped, parentheses
    /// turned into spaces, then everything but printable ASCII dropped (control characters and
    /// backslashes included), runs of spaces made one, and spaces before `;` and `,` and at
    /// either end removed.
    static func commentText(_ text: String) -> String {
        let folded = withoutAccents(text)
        var result = ""
        var pendingSpace = false
        for scalar in folded.unicodeScalars {
            let isSpace = scalar == " " || scalar == "\t" || scalar == "(" || scalar == ")"
            if isSpace {
                pendingSpace = !result.isEmpty
                continue
            }
            guard scalar.value > 0x20, scalar.value < 0x7F, scalar != "\\" else { continue }
            if pendingSpace, scalar != ";", scalar != "," {
                result.append(" ")
            }
            pendingSpace = false
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    /// `text` without its accents (`Café` is `Cafe`); ASCII text as it is, without asking
    /// Foundation.
    static func withoutAccents(_ text: String) -> String {
        text.utf8.allSatisfy { $0 < 0x80 } ? text : text.folding(options: .diacriticInsensitive, locale: nil)
    }

    /// `text` without white space (spaces, tabs, line breaks, Unicode's other spaces) at either
    /// end.
    static func trimmingWhitespace<Text: StringProtocol>(_ text: Text) -> String {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }), let last = text.lastIndex(where: { !$0.isWhitespace }) else {
            return ""
        }
        return String(text[first...last])
    }

    // MARK: - The system

    /// The operating system of this process, as ``system`` shows it.
    static func currentSystem() -> String {
        #if os(Linux)
        var names = utsname()
        let kernelRelease =
            uname(&names) == 0 ? withUnsafeBytes(of: &names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) } : ""
        let osRelease = ["/etc/os-release", "/usr/lib/os-release"].lazy
            .compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }
            .first
        return linuxSystem(osRelease: osRelease, kernelVersion: kernelVersion(release: kernelRelease))
        #else
        let version = ProcessInfo.processInfo.operatingSystemVersion
        return "\(systemName) \(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"
        #endif
    }

    /// The kernel's version as `major.minor.patch`, from its release as `uname(2)` gives it
    /// (`6.1.0-18-amd64` is `6.1.0`, `6.8` is `6.8.0`), read as Foundation's
    /// `ProcessInfo.operatingSystemVersion` reads it (up to the first `-`, the components that
    /// are whole numbers), without Foundation.
    static func kernelVersion(release: String) -> String {
        let numbers = release.prefix { $0 != "-" }.split(separator: ".").compactMap { Int($0) }
        let major = numbers.first ?? -1
        let minor = numbers.count > 1 ? numbers[1] : 0
        let patch = numbers.count > 2 ? numbers[2] : 0
        return "\(major).\(minor).\(patch)"
    }

    /// A Linux system: the distribution named by the `os-release` file `osRelease` (its
    /// `PRETTY_NAME`, or else `NAME` and `VERSION_ID`), then `Linux` and the kernel's version.
    static func linuxSystem(osRelease: String?, kernelVersion: String) -> String {
        let kernel = "Linux \(kernelVersion)"
        let fields = osRelease.map(Self.osReleaseFields) ?? [:]
        let distribution =
            fields["PRETTY_NAME"]
            ?? fields["NAME"].map { name in fields["VERSION_ID"].map { "\(name) \($0)" } ?? name }
        guard let distribution, !Self.commentText(distribution).isEmpty else { return kernel }
        return "\(distribution); \(kernel)"
    }

    /// The `KEY=value` lines of an `os-release` file (os-release(5)), values unquoted.
    static func osReleaseFields(_ contents: String) -> [String: String] {
        var fields: [String: String] = [:]
        for line in contents.split(whereSeparator: \.isNewline) {
            let line = trimmingWhitespace(line)
            guard !line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { continue }
            let key = String(line[..<equals])
            var value = Substring(line[line.index(after: equals)...])
            if let quote = value.first, quote == "\"" || quote == "'", value.count >= 2, value.last == quote {
                value = value.dropFirst().dropLast()
                if quote == "\"" {
                    // Inside double quotes a backslash escapes the next character.
                    var unescaped = ""
                    var escaping = false
                    for character in value {
                        if !escaping, character == "\\" {
                            escaping = true
                            continue
                        }
                        escaping = false
                        unescaped.append(character)
                    }
                    value = Substring(unescaped)
                }
            }
            fields[key] = String(value)
        }
        return fields
    }

    /// The name of the operating system Moya was compiled for.
    static var systemName: String {
        #if os(Linux)
        return "Linux"
        #elseif os(macOS)
        return "macOS"
        #elseif os(iOS)
        return "iOS"
        #elseif os(tvOS)
        return "tvOS"
        #elseif os(watchOS)
        return "watchOS"
        #elseif os(visionOS)
        return "visionOS"
        #elseif os(Windows)
        return "Windows"
        #elseif os(Android)
        return "Android"
        #else
        return "Unknown"
        #endif
    }

    /// The version of the Swift compiler that built Moya, to its minor version (the compiler
    /// tells only whether it is at least a given version; `6.2` is the oldest the package builds
    /// with).
    static var compilerVersion: String {
        #if compiler(>=7.0)
        return "7"
        #elseif compiler(>=6.9)
        return "6.9"
        #elseif compiler(>=6.8)
        return "6.8"
        #elseif compiler(>=6.7)
        return "6.7"
        #elseif compiler(>=6.6)
        return "6.6"
        #elseif compiler(>=6.5)
        return "6.5"
        #elseif compiler(>=6.4)
        return "6.4"
        #elseif compiler(>=6.3)
        return "6.3"
        #else
        return "6.2"
        #endif
    }
}
