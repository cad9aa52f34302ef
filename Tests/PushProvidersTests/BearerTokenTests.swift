@testable import PushProviders
import Testing

/// An OAuth token endpoint's answer becomes `authorization: Bearer <token>`
/// on every FCM and Push Kit request, so the token is checked before use.
@Suite("Access tokens from a token endpoint")
struct BearerTokenTests {
    @Test("the shapes Google and Huawei issue are taken; anything that could break the header line is not")
    func bearerTokens() {
        let taken = [
            "ya29.a0AfH6SMBx-" + String(repeating: "Q", count: 200) + "_0163",  // Google's form
            "CV7cI2y+K5kT9t3YyLJ7r1h/3xF2Hbw4A0qXn0a8f7Q=",  // Huawei's: base64 with + / =
            "x", String(repeating: "a", count: 8_192), "!#$%&'()*+,-./:;<=>?@[]^_`{|}~",
        ]
        for token in taken { #expect(ProviderHeaders.isBearerToken(token), "\(token.prefix(40))") }
        let refused = [
            "", "abc\r\nx-injected: yes", "abc\ndef", "abc\rdef", "abc\u{0}def", "abc def", "abc\tdef", "abc\u{7F}",
            "tökén", "\u{2028}", String(repeating: "a", count: 8_193),
        ]
        for token in refused { #expect(!ProviderHeaders.isBearerToken(token), "\(token.debugDescription.prefix(40))") }
    }
}
