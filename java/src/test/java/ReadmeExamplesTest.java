import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The programs java/README.md quotes (tests/docs/test_go_java_snippets.py checks the quoting): they compile here, and run where they need nothing outside the process. */
class ReadmeExamplesTest {
    @Test
    void sealAndOpenOpensForAliceRefusesBobAndRefusesASecondRedemption() throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(captured, true, StandardCharsets.UTF_8)) {
            System.setOut(out);
            SealAndOpen.main(new String[0]);
        } finally {
            System.setOut(original);
        }
        assertEquals(List.of("{\"head\":\"4b1d0aa\"}", "wrong_user", "The request state belongs to another user.", "replayed"),
                captured.toString(StandardCharsets.UTF_8).lines().toList());
    }
}
