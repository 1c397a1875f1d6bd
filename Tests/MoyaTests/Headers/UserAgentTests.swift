import Foundation
import MoyaTestServer
import Testing

@testable import Moya

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

@Suite("The default User-Agent: the program, the system, Swift and Moya, as a valid header value")
struct UserAgentTests {
    static let debian = """
        PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"
        NAME="Debian GNU/Linux"
        VERSION_ID="12"
        VERSION="12 (bookworm)"
        ID=debian
        """

    static let moya = "Moya/\(MoyaInfo.version)"

    /// The name of this test process's executable, as the default value should start.
    static var executableName: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).lastPathComponent
    }

    @Test("The default names the executable, Moya's version, the system and Swift, and nothing is Unknown")
    func defaultValue() throws {
        let value = UserAgent.current.value
        #expect(value.hasPrefix(Self.executableName + " ") || value.hasPrefix(Self.executableName + "/"), "\(value)")
        #expect(value.contains(Self.moya), "\(value)")
        #expect(value.hasSuffix(Self.moya), "\(value)")
        #expect(value.contains("Swift/\(UserAgent.compilerVersion)"), "\(value)")
        #if os(Linux)
        #expect(value.contains("; Linux ") || value.contains("(Linux "), "\(value)")
        #endif
        #expect(!value.contains("Unknown"), "\(value)")
        #expect(Self.isValidUserAgent(value), "\(value)")
    }

    @Test("Every way Moya 15 code reads the default headers gives the same value")
    func defaultHeaders() {
        let value = UserAgent.current.value
        #expect(Session.defaultHTTPHeaders["User-Agent"] == value)
        #expect(HTTPHeader.defaultUserAgent == .userAgent(value))
        #expect(HTTPHeaders.default.value(for: "user-agent") == value)
        #expect(Session.Configuration().headers["User-Agent"] == value)
    }

    @Test("A real request of a default session carries it")
    func sentWithRequests() async throws {
        let server = try await TestServer.start()
        let session = Session()
        let provider = MoyaProvider<Remote>(session: session)
        let response = try await provider.request(Remote(server.baseURL, "/echo"))
        #expect(response.statusCode == 200)
        let received = try #require(try await server.waitForRequests(count: 1).first)
        let sent = received.headers.filter { $0.name.lowercased() == "user-agent" }.map(\.value)
        #expect(sent == [UserAgent.current.value])
        try await session.shutdown()
        await server.shutdown()
    }

    @Test("A program on Linux: its name, the distribution without parentheses, the kernel, Swift, Moya")
    func linuxProgram() {
        let system = UserAgent.linuxSystem(osRelease: Self.debian, kernelVersion: "6.18.44")
        #expect(system == "Debian GNU/Linux 12 (bookworm); Linux 6.18.44")
        let agent = UserAgent(bundleInfo: [:], executablePath: "/srv/bin/GatewayService", system: system, swiftVersion: "6.3")
        #expect(agent.value == "GatewayService (Debian GNU/Linux 12 bookworm; Linux 6.18.44) Swift/6.3 \(Self.moya)")

        var versioned = agent
        versioned.bundleInfo = ["CFBundleShortVersionString": "1.4.0"]
        #expect(versioned.value == "GatewayService/1.4.0 (Debian GNU/Linux 12 bookworm; Linux 6.18.44) Swift/6.3 \(Self.moya)")
        #expect(Self.isValidUserAgent(versioned.value))
    }

    @Test("The distribution: PRETTY_NAME, else NAME and VERSION_ID; none gives the kernel alone")
    func distribution() {
        #expect(UserAgent.linuxSystem(osRelease: #"PRETTY_NAME="Ubuntu 24.04.2 LTS""#, kernelVersion: "6.8.0") == "Ubuntu 24.04.2 LTS; Linux 6.8.0")
        #expect(UserAgent.linuxSystem(osRelease: "NAME='Alpine Linux'\nVERSION_ID=3.20.3\n", kernelVersion: "6.6.1") == "Alpine Linux 3.20.3; Linux 6.6.1")
        #expect(UserAgent.linuxSystem(osRelease: "NAME=Distroless\n", kernelVersion: "6.6.1") == "Distroless; Linux 6.6.1")
        #expect(UserAgent.linuxSystem(osRelease: nil, kernelVersion: "6.6.1") == "Linux 6.6.1")
        #expect(UserAgent.linuxSystem(osRelease: "# nothing\n", kernelVersion: "6.6.1") == "Linux 6.6.1")
        #expect(UserAgent.linuxSystem(osRelease: "PRETTY_NAME=\"\"\n", kernelVersion: "6.6.1") == "Linux 6.6.1")
        let escaped = UserAgent.osReleaseFields(#"PRETTY_NAME="My \"Best\" OS \\ 1""#)
        #expect(escaped["PRETTY_NAME"] == #"My "Best" OS \ 1"#)
    }

    @Test("An app whose bundle has an identifier keeps Alamofire's format")
    func appFormat() {
        let agent = UserAgent(
            bundleInfo: [
                "CFBundleExecutable": "Example",
                "CFBundleIdentifier": "org.alamofire.Example",
                "CFBundleShortVersionString": "1.0",
                "CFBundleVersion": "1",
            ],
            executablePath: "/Applications/Example.app/Example",
            system: "iOS 17.5.0",
            swiftVersion: "6.3"
        )
        #expect(agent.value == "Example/1.0 (org.alamofire.Example; build:1; iOS 17.5.0) \(Self.moya)")
        #expect(Self.isValidUserAgent(agent.value))
    }

    @Test("Names and systems that are not valid in a header are made valid")
    func hostileParts() {
        let agent = UserAgent(
            bundleInfo: ["CFBundleShortVersionString": "1.0 (beta)"],
            executablePath: "/opt/Café tool\u{7}(x)",
            system: "Weird (OS)\r\n\\ 1 ; Linux 6.1\u{0}",
            swiftVersion: "6.3"
        )
        #expect(agent.value == "Cafe-tool--x-/1.0--beta- (Weird OS 1; Linux 6.1) Swift/6.3 \(Self.moya)")
        #expect(Self.isValidUserAgent(agent.value))

        let nameless = UserAgent(bundleInfo: [:], executablePath: nil, system: "Linux 6.1", swiftVersion: "6.3")
        #expect(nameless.value == "Swift/6.3 (Linux 6.1) \(Self.moya)")
        #expect(Self.isValidUserAgent(nameless.value))

        let app = UserAgent(
            bundleInfo: ["CFBundleIdentifier": "com.example.(app)", "CFBundleVersion": "1\n2"],
            executablePath: "/bin/My App",
            system: "macOS 15.5.0",
            swiftVersion: "6.3"
        )
        #expect(app.value == "My-App/Unknown (com.example. app; build:12; macOS 15.5.0) \(Self.moya)")
        #expect(Self.isValidUserAgent(app.value))
    }

    @Test("The kernel's version is read from its release as Foundation reads it")
    func kernelVersion() {
        let cases: [(String, String)] = [
            ("6.1.0-18-amd64", "6.1.0"), ("6.18.44-fc-v669", "6.18.44"), ("5.15.0-1051-azure", "5.15.0"), ("6.8", "6.8.0"),
            ("6", "6.0.0"), ("6.8.0+", "6.8.0"), ("6.x.3", "6.3.0"), ("", "-1.0.0"),
        ]
        for (release, version) in cases {
            #expect(UserAgent.kernelVersion(release: release) == version, "\(release)")
        }
        #if os(Linux)
        // This host's kernel, as Foundation has it.
        let version = ProcessInfo.processInfo.operatingSystemVersion
        #expect(UserAgent.currentSystem().hasSuffix("Linux \(version.majorVersion).\(version.minorVersion).\(version.patchVersion)"))
        #endif
    }

    @Test("Without Foundation: the executable's name, accents and white space come out as Foundation's did")
    func withoutFoundation() {
        for path in ["/usr/bin/tool", "tool", "./tool", "/opt/My Tool/", "/opt/Café tool\u{7}(x)", "a//b", "/"] {
            #expect(UserAgent.lastPathComponent(path) == URL(fileURLWithPath: path).lastPathComponent, "\(path)")
        }
        for text in ["plain", " Café ", "Ünïcödé\t", "\u{00A0}spaced\u{2003}", "\n", "", "a b\r\n"] {
            #expect(
                UserAgent.trimmingWhitespace(UserAgent.withoutAccents(text))
                    == text.folding(options: .diacriticInsensitive, locale: nil).trimmingCharacters(in: .whitespacesAndNewlines),
                "\(text)")
        }
        #expect(UserAgent.mainBundleInfo().isEmpty || Bundle.main.infoDictionary != nil)
    }

    @Test("The checker accepts products and nested comments, and refuses what RFC 9110 does")
    func checker() {
        #expect(Self.isValidUserAgent("curl/8.5.0"))
        #expect(Self.isValidUserAgent("Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0"))
        #expect(Self.isValidUserAgent(#"A (nested (comment) and \) escaped) B/1"#))
        #expect(!Self.isValidUserAgent(""))
        #expect(!Self.isValidUserAgent("(comment first) A/1"))
        #expect(!Self.isValidUserAgent("A/1  "))
        #expect(!Self.isValidUserAgent("Two Words/1 (x"))
        #expect(!Self.isValidUserAgent("A/1 (x) y)"))
        #expect(!Self.isValidUserAgent("A/ B"))
        #expect(!Self.isValidUserAgent("A/1\r\nX-Injected: 1"))
        #expect(!Self.isValidUserAgent("Café/1"))
    }

    // MARK: - A User-Agent checker

    /// Whether `value` is a `User-Agent` by RFC 9110, section 10.1.5:
    /// `product *( RWS ( product / comment ) )`, where `product = token ["/" token]` and
    /// `comment = "(" *( ctext / quoted-pair / comment ) ")"`. Only ASCII is accepted (no
    /// `obs-text`), as a header sent from code should be.
    static func isValidUserAgent(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        var index = 0

        func isToken(_ byte: UInt8) -> Bool {
            HTTPSyntax.isTokenCharacter(byte)
        }
        func token() -> Bool {
            let start = index
            while index < bytes.count, isToken(bytes[index]) { index += 1 }
            return index > start
        }
        func product() -> Bool {
            guard token() else { return false }
            if index < bytes.count, bytes[index] == UInt8(ascii: "/") {
                index += 1
                return token()
            }
            return true
        }
        func comment() -> Bool {
            guard index < bytes.count, bytes[index] == UInt8(ascii: "(") else { return false }
            index += 1
            while index < bytes.count {
                let byte = bytes[index]
                switch byte {
                case UInt8(ascii: ")"):
                    index += 1
                    return true
                case UInt8(ascii: "("):
                    guard comment() else { return false }
                case UInt8(ascii: "\\"):
                    // quoted-pair: a backslash and a tab, space or visible character.
                    guard index + 1 < bytes.count, bytes[index + 1] == 0x09 || (0x20...0x7E).contains(bytes[index + 1]) else { return false }
                    index += 2
                default:
                    // ctext: tab, space and visible characters other than the three above.
                    guard byte == 0x09 || (0x20...0x7E).contains(byte) else { return false }
                    index += 1
                }
            }
            return false
        }

        guard product() else { return false }
        while index < bytes.count {
            // RWS
            let start = index
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 { index += 1 }
            guard index > start, index < bytes.count else { return false }
            let valid = bytes[index] == UInt8(ascii: "(") ? comment() : product()
            guard valid else { return false }
        }
        return true
    }
}
