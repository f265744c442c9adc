import express from 'express';

/**
 * The JSON body parser, used per route after authentication: an unauthenticated caller learns
 * nothing about what a body should look like, it gets 401 whatever it sent.
 */
export const jsonBody = express.json({ limit: '64kb', strict: true });
