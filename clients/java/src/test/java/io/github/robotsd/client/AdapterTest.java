package io.github.robotsd.client;

import static io.github.robotsd.client.TestRunner.check;
import static io.github.robotsd.client.TestRunner.equal;

import crawlercommons.robots.BaseRobotRules;
import io.github.robotsd.client.TestRunner.Cleanup;
import io.github.robotsd.client.TestRunner.Test;
import java.util.List;
import org.example.robotsd.RobotsdRobotRules;

/** The README's crawler-commons adapter, compiled from the README, against robotsd. */
final class AdapterTest {

  @Test
  void theReadmesAdapterAnswersAsBaseRobotRules(Cleanup c) throws Exception {
    Harness.Site site = Harness.site51(c);
    RobotsdClient client = Harness.robotsd(c);
    BaseRobotRules rules = new RobotsdRobotRules(client.rules(site.url + "/", "ExampleBot"));
    check(rules.isAllowed(site.url + "/p/1") && !rules.isAllowed(site.url + "/private/1"), "verdicts");
    check(!rules.isAllowAll() && !rules.isAllowNone() && !rules.isDeferVisits(), "a parsed file");
    equal(rules.getCrawlDelay(), 10L, "crawl-delay (ms)");
    equal(rules.getSitemaps(), List.of("http://127.0.0.1/sitemap.xml"), "sitemaps");
  }

  @Test
  void theAdapterOfRulesMadeWhileRobotsdWasDownDefersAndThrowsNothing(Cleanup c) throws Exception {
    // Nutch calls isDeferVisits, then isAllowed, from its fetcher threads, on rules it keeps.
    RobotsdClient down = RobotsdClient.create("http://127.0.0.1:" + Harness.freePort());
    BaseRobotRules rules = new RobotsdRobotRules(down.rules("http://a.test/", "ExampleBot"));
    check(rules.isDeferVisits(), "deferred: nothing checked");
    check(!rules.isAllowed("http://a.test/p/1"), "failing closed");
    equal(rules.getCrawlDelay(), BaseRobotRules.UNSET_CRAWL_DELAY, "no crawl-delay");
  }
}
